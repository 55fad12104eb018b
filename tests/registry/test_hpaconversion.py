"""autoscaling/v1 <-> v2 HorizontalPodAutoscalers: what v1 cannot say survives in kube's
annotations, and bad annotations are ignored as kube ignores them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from platform_api.registry.hpaconversion import BEHAVIOR, METRICS, converted_to_v2, to_v1, to_v2

CASES = json.loads((Path(__file__).parent / "fixtures" / "hpa_versions_kube.json").read_text())


def test_v2_through_v1_and_back_keeps_everything() -> None:
    """Every metric and the behavior come back; the CPU target comes last, as in kube
    (its v1 conversion appends it after the annotation's metrics)."""
    stored = next(c for c in CASES if c["name"] == "v2-many")["as_v2"]
    again = to_v2(to_v1(copy.deepcopy(stored)))
    metrics = stored["spec"]["metrics"]
    assert again["spec"] == {**stored["spec"], "metrics": [*metrics[1:], metrics[0]]}
    assert again["metadata"] == stored["metadata"]


def test_v1_reads_as_kube_serves_it() -> None:
    for case in CASES:
        if "as_v2" in case:
            assert to_v1(copy.deepcopy(case["as_v2"])) == case["as_v1"], case["name"]


def test_unreadable_annotations_are_dropped_not_fatal() -> None:
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "annotations": {METRICS: "{not json", BEHAVIOR: "[]", "k": "v"}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 2},
    }
    v2 = to_v2(v1)
    assert v2["metadata"]["annotations"] == {"k": "v"}
    assert v2["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert "behavior" not in v2["spec"]


def test_the_converter_alone_sets_no_defaults() -> None:
    """What the field manager prunes in: a v1 object without minReplicas converts to v2
    without it (kube's conversion), though reading the v2 object back defaults it."""
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 2},
    }
    assert "minReplicas" not in converted_to_v2(copy.deepcopy(v1))["spec"]
    assert to_v2(v1)["spec"]["minReplicas"] == 1
