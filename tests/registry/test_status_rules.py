"""Status writes of kinds with rules of their own, against kube-apiserver v1.36's answers
(fixtures/status_rules_kube.json): a budget's and an autoscaler's counts are not
negative, a budget's conditions are standard ones, flow control conditions have a type
and no type twice."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.strategy import strategy_for
from platform_api.scheme.types import ResourceType
from platform_api.validation import field

FLOW = "flowcontrol.apiserver.platform.io"
CASES = json.loads((Path(__file__).parent / "fixtures" / "status_rules_kube.json").read_text())
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
    "FlowSchema": (
        ResourceType(FLOW, "v1", "FlowSchema", "flowschemas", "flowschema", False),
        'FlowSchema.flowcontrol.apiserver.k8s.io "fs1"',
    ),
    "PriorityLevelConfiguration": (
        ResourceType(
            FLOW,
            "v1",
            "PriorityLevelConfiguration",
            "prioritylevelconfigurations",
            "prioritylevelconfiguration",
            False,
        ),
        'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "plc1"',
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
