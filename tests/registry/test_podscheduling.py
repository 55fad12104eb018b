"""Affinity, topology spread, DNS config, security contexts and the pod spec's other
lists, case by case as kube-apiserver v1.36 answered each (reference, dry runs)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.podscheduling import merge_label_keys
from platform_api.registry.podspec import validate_pod_spec

# name, spec, and the 422 message kube gave ("" for 201)
KUBE_ANSWERS = json.loads(
    (Path(__file__).parent / "fixtures" / "pod_scheduling_security_kube.json").read_text()
)


@pytest.mark.parametrize("case", KUBE_ANSWERS, ids=[c["name"] for c in KUBE_ANSWERS])
def test_pods_are_answered_as_kube_answered_them(case: dict[str, Any]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": copy.deepcopy(case["spec"])}
    apply_defaults("", "Pod", pod)
    errs = validate_pod_spec(pod["spec"], "spec", case["name"])
    message = errors.invalid("Pod", "", case["name"], errs).message if errs else ""
    assert message == case["message"]


def _term(**extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"tier": "x"}}, **extra}


def test_label_keys_the_pod_carries_complete_its_selectors_on_create() -> None:
    """As kube stored it: ``In`` the pod's value for matchLabelKeys, ``NotIn`` for
    mismatchLabelKeys, after the selector's own expressions; keys the pod lacks add
    nothing, and a term without a selector is left alone (validation refuses it)."""
    spread = {"maxSkew": 1, "topologyKey": "a", "whenUnsatisfiable": "DoNotSchedule"}
    pod = {
        "metadata": {"labels": {"app": "web", "tier2": "t"}},
        "spec": {
            "topologySpreadConstraints": [
                {**spread, **_term(matchLabelKeys=["app", "absent"])},
                {**spread, "topologyKey": "b", "matchLabelKeys": ["app"]},
            ],
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            **_term(matchLabelKeys=["app"], mismatchLabelKeys=["tier2"]),
                            "topologyKey": "zone",
                        }
                    ]
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "podAffinityTerm": _term(mismatchLabelKeys=["app"])}
                    ]
                },
            },
        },
    }
    merge_label_keys(pod)
    spec = pod["spec"]
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchLabels": {"tier": "x"},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}],
    }
    assert "labelSelector" not in spec["topologySpreadConstraints"][1]
    required = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required[0]["labelSelector"]["matchExpressions"] == [
        {"key": "app", "operator": "In", "values": ["web"]},
        {"key": "tier2", "operator": "NotIn", "values": ["t"]},
    ]
    preferred = spec["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert preferred[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"] == [
        {"key": "app", "operator": "NotIn", "values": ["web"]}
    ]


def test_a_pod_may_repeat_a_toleration_where_a_runtime_class_may_not() -> None:
    """kube created a pod, a Deployment and a Job each tolerating ``k2`` twice; only a
    RuntimeClass's scheduling requires its tolerations unique (test_node)."""
    twice = [{"key": "k2", "operator": "Exists"}, {"key": "k2", "operator": "Exists"}]
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "i"}]}}
    pod["spec"]["tolerations"] = twice
    apply_defaults("", "Pod", pod)
    assert validate_pod_spec(pod["spec"], "spec", "p") == []
