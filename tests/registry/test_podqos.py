"""status.qosClass as kube-apiserver v1.36 set it on pods created with each spec (the
reference, dry runs): requests defaulted from limits first, as the decoder does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.quota.scopes import is_best_effort
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.podqos import pod_qos

KUBE = json.loads((Path(__file__).parent / "fixtures" / "pod_qos_kube.json").read_text())


@pytest.mark.parametrize("name", sorted(KUBE))
def test_the_class_kube_computed(name: str) -> None:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": copy.deepcopy(KUBE[name]["spec"]),
    }
    apply_defaults("", "Pod", pod)
    assert pod_qos(pod) == KUBE[name]["qosClass"]
    assert is_best_effort(pod) == (KUBE[name]["qosClass"] == "BestEffort")


def _c(name: str = "c", **resources: Any) -> dict[str, Any]:
    return {"name": name, "image": "i", "resources": resources}


@pytest.mark.parametrize(
    ("spec", "stored"),
    [
        (  # no container asks: the pod-level limits
            {"containers": [_c()], "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
        ),
        (  # containers ask: the most they ask at once (an init container, here)
            {
                "containers": [_c(requests={"cpu": "500m"}), _c("d", requests={"cpu": "200m"})],
                "initContainers": [_c("i", requests={"cpu": "900m"})],
                "resources": {"limits": {"cpu": "2", "memory": "2Gi"}},
            },
            {"limits": {"cpu": "2", "memory": "2Gi"}, "requests": {"cpu": "900m", "memory": "2Gi"}},
        ),
        (  # a given request stays
            {
                "containers": [_c()],
                "resources": {"limits": {"cpu": "2"}, "requests": {"memory": "1Gi"}},
            },
            {"limits": {"cpu": "2"}, "requests": {"cpu": "2", "memory": "1Gi"}},
        ),
    ],
)
def test_pod_level_requests_default_as_kube_stored_them(
    spec: dict[str, Any], stored: dict[str, Any]
) -> None:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "spec": spec}
    apply_defaults("", "Pod", pod)
    assert pod["spec"]["resources"] == stored
