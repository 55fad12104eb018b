"""An autoscaler's metrics and target, refused as kube-apiserver v1.36 refused each
(the fixture: its 422 causes, in order, for dry-run creates of these specs)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.hpaconversion import default_autoscaler
from platform_api.registry.hpametrics import DESCRIBED, RefOptions, api_version_problem
from platform_api.registry.policies import validate_autoscaler_spec

CASES = json.loads((Path(__file__).parent / "fixtures" / "hpa_metrics_kube.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[json.dumps(c["spec"])[60:120] for c in CASES])
def test_metrics_are_refused_as_kube_refused_them(case: dict[str, Any]) -> None:
    obj = {"apiVersion": "autoscaling/v2", "spec": copy.deepcopy(case["spec"])}
    default_autoscaler(obj)
    assert [str(e) for e in validate_autoscaler_spec(obj["spec"])] == case["errors"]


def test_an_update_keeping_the_target_is_not_checked_again() -> None:
    old = {"scaleTargetRef": {"apiVersion": "v1", "kind": "Deployment", "name": "d"}}
    spec = {**old, "minReplicas": 0, "maxReplicas": 2, "metrics": []}
    assert [str(e) for e in validate_autoscaler_spec(spec)] == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        'spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group',
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas",
    ]
    # kept from an object that had them: zero replicas and the unchecked target
    before = {**old, "minReplicas": 0}
    assert [str(e) for e in validate_autoscaler_spec(spec, before)] == [
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas",
    ]


@pytest.mark.parametrize(
    ("version", "options", "problem"),
    [
        ("", DESCRIBED, ""),
        ("v1", DESCRIBED, ""),
        ("v1", RefOptions(), "apiVersion must specify API group"),
        ("apps/v1", RefOptions(), ""),
        ("a/b/c", DESCRIBED, "unexpected GroupVersion string: a/b/c"),
    ],
)
def test_api_versions_parse_as_kubes(version: str, options: RefOptions, problem: str) -> None:
    assert api_version_problem(version, options) == problem


def test_a_target_type_is_a_named_type() -> None:
    """MetricTargetType is a named Go string: its bad value is marshalled as JSON (the
    reference's ``"\\u0001"``), not quoted with %q."""
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "\x01"}}}
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": 1,
        "maxReplicas": 3,
        "metrics": [metric],
    }
    assert str(validate_autoscaler_spec(spec)[0]) == (
        'spec.metrics[0].resource.target.type: Invalid value: "\\u0001": must be either '
        "Utilization, Value, or AverageValue"
    )
