"""PodDisruptionBudget and HorizontalPodAutoscaler status writes against kube-apiserver
v1.36's answers (fixtures/budget_autoscaler_status_kube.json): counts are not negative,
a budget's conditions are standard ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.strategy import strategy_for
from platform_api.scheme.types import ResourceType
from platform_api.validation import field

CASES = json.loads(
    (Path(__file__).parent / "fixtures" / "budget_autoscaler_status_kube.json").read_text()
)
TYPES = {
    "PodDisruptionBudget": (
        ResourceType("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "pdb", True),
        'PodDisruptionBudget.policy "p1"',
    ),
    "HorizontalPodAutoscaler": (
        ResourceType(
            "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", "hpa", True
        ),
        'HorizontalPodAutoscaler.autoscaling "h1"',
    ),
}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}: {c['case']}" for c in CASES])
def test_status_writes_answer_as_kube(case: dict[str, Any]) -> None:
    rt, named = TYPES[case["kind"]]
    old = {
        "apiVersion": f"{rt.group}/{rt.version}",
        "kind": rt.kind,
        "metadata": {"name": "x", "namespace": "gp", "resourceVersion": "1"},
        "spec": {},
        "status": {},
    }
    new = copy.deepcopy(old)
    new["status"].update(case["status"])
    errs = strategy_for(rt).validate_status_update(new, old)  # type: ignore[attr-defined]
    answer = (422, f"{named} is invalid: {field.aggregate(errs)}") if errs else (200, "")
    assert answer == (case["code"], case["message"])
