"""Fields of gates that are off, dropped from writes as kube v1.36's strategies drop them
(each drop checked against the reference kube-apiserver with its default gates)."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from platform_api.apiserver.featuregates_data import GATES
from platform_api.registry.gateddrops import (
    CONTAINER_STOP_SIGNALS,
    MAX_UNAVAILABLE_STATEFUL_SET,
    OFF_BY_DEFAULT,
    drop_disabled,
    kube_defaults,
)
from platform_api.registry.store import Store
from platform_api.scheme.builtin import BUILTIN_TYPES

Obj = dict[str, Any]


def _everything_on(name: str) -> bool:
    return True


def test_the_gates_consulted_are_off_in_kube_v1_36() -> None:
    assert all(GATES[name][0] is False for name in OFF_BY_DEFAULT)
    assert not kube_defaults(CONTAINER_STOP_SIGNALS)
    assert kube_defaults("SidecarContainers")


def _pod_spec() -> Obj:
    return {
        "containers": [
            {"name": "a", "image": "i", "lifecycle": {"stopSignal": "SIGTERM"}},
            {
                "name": "b",
                "image": "i",
                "lifecycle": {"stopSignal": "SIGKILL", "preStop": {"sleep": {"seconds": 1}}},
            },
        ],
        "initContainers": [{"name": "i", "image": "i", "lifecycle": {"stopSignal": "SIGINT"}}],
        "volumes": [
            {
                "name": "v",
                "projected": {
                    "sources": [
                        {"clusterTrustBundle": {"name": "x", "path": "ca.pem"}},
                        {"podCertificate": {"signerName": "example.com/s", "keyType": "RSA3072"}},
                        {"configMap": {"name": "c"}},
                    ]
                },
            }
        ],
        "schedulingGroup": {"podGroupName": "g"},
    }


def test_a_new_pod_loses_the_fields_of_gates_that_are_off() -> None:
    pod = {"metadata": {}, "spec": _pod_spec()}
    drop_disabled("", "Pod", pod, None, kube_defaults)
    spec = pod["spec"]
    assert "lifecycle" not in spec["containers"][0]  # empty once its stop signal goes
    assert spec["containers"][1]["lifecycle"] == {"preStop": {"sleep": {"seconds": 1}}}
    assert "lifecycle" not in spec["initContainers"][0]
    # The projected sources stay, empty, as kube leaves them.
    assert spec["volumes"][0]["projected"]["sources"] == [{}, {}, {"configMap": {"name": "c"}}]
    assert "schedulingGroup" not in spec


def test_a_gate_turned_on_keeps_its_fields() -> None:
    pod = {"metadata": {}, "spec": _pod_spec()}
    drop_disabled("", "Pod", pod, None, _everything_on)
    assert pod["spec"] == _pod_spec()


def test_an_update_keeps_what_the_object_already_uses() -> None:
    old = {"metadata": {}, "spec": _pod_spec()}
    new = copy.deepcopy(old)
    new["spec"]["containers"].append(
        {"name": "c", "image": "i", "lifecycle": {"stopSignal": "SIGTERM"}}
    )
    drop_disabled("", "Pod", new, old, kube_defaults)
    assert new["spec"]["containers"][2]["lifecycle"] == {"stopSignal": "SIGTERM"}
    assert new["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    assert new["spec"]["volumes"] == old["spec"]["volumes"]


@pytest.mark.parametrize(
    ("group", "kind", "path"),
    [
        ("", "PodTemplate", ("template", "spec")),
        ("", "ReplicationController", ("spec", "template", "spec")),
        ("apps", "Deployment", ("spec", "template", "spec")),
        ("apps", "DaemonSet", ("spec", "template", "spec")),
        ("batch", "Job", ("spec", "template", "spec")),
        ("batch", "CronJob", ("spec", "jobTemplate", "spec", "template", "spec")),
    ],
)
def test_pod_templates_lose_them_too(group: str, kind: str, path: tuple[str, ...]) -> None:
    obj: Obj = {"metadata": {}}
    holder = obj
    for key in path[:-1]:
        holder = holder.setdefault(key, {})
    holder[path[-1]] = _pod_spec()
    drop_disabled(group, kind, obj, None, kube_defaults)
    assert "schedulingGroup" not in holder[path[-1]]
    assert "lifecycle" not in holder[path[-1]]["containers"][0]


def _status(volume_status: bool, claims: bool) -> Obj:
    mount: Obj = {"name": "v", "mountPath": "/x"}
    if volume_status:
        mount["volumeStatus"] = {"image": {"imageRef": "sha256:abc"}}
    status: Obj = {"containerStatuses": [{"name": "c", "volumeMounts": [mount]}]}
    if claims:
        status["nodeAllocatableResourceClaimStatuses"] = [
            {"resourceClaimName": "rc", "resources": {"cpu": "1"}}
        ]
    return status


def test_a_pod_status_loses_image_digests_and_node_allocatable_claims() -> None:
    new = {"metadata": {}, "spec": {}, "status": _status(True, True)}
    old = {"metadata": {}, "spec": {}, "status": _status(False, False)}
    drop_disabled("", "Pod", new, old, kube_defaults)
    assert new["status"] == _status(False, False)
    # ...unless the stored status has them already.
    new = {"metadata": {}, "spec": {}, "status": _status(True, True)}
    drop_disabled("", "Pod", new, {"metadata": {}, "status": _status(True, True)}, kube_defaults)
    assert new["status"] == _status(True, True)


def _statefulset(max_unavailable: int | None) -> Obj:
    rolling: Obj = {"partition": 0}
    if max_unavailable is not None:
        rolling["maxUnavailable"] = max_unavailable
    return {"metadata": {}, "spec": {"updateStrategy": {"rollingUpdate": rolling}}}


def test_a_statefulset_loses_max_unavailable_unless_it_has_it() -> None:
    new = _statefulset(2)
    drop_disabled("apps", "StatefulSet", new, None, kube_defaults)
    assert new == _statefulset(None)
    new = _statefulset(3)
    drop_disabled("apps", "StatefulSet", new, _statefulset(2), kube_defaults)
    assert new == _statefulset(3)
    new = _statefulset(2)
    drop_disabled("apps", "StatefulSet", new, None, lambda n: n == MAX_UNAVAILABLE_STATEFUL_SET)
    assert new == _statefulset(2)


def _slice(extra: bool) -> Obj:
    device: Obj = {"name": "d", "attributes": {"a": {"int": 1}, "c": {"string": "x"}}}
    if extra:
        device["attributes"]["c"]["strings"] = ["y"]
        device["nodeAllocatableResourceMappings"] = {"cpu": {"capacityKey": "x/cpus"}}
    return {"metadata": {}, "spec": {"devices": [device]}}


def test_a_resource_slice_loses_list_attributes_and_node_allocatable_mappings() -> None:
    new = _slice(True)
    drop_disabled("resource.platform.io", "ResourceSlice", new, None, kube_defaults)
    assert new == _slice(False)
    new = _slice(True)
    drop_disabled("resource.platform.io", "ResourceSlice", new, _slice(True), kube_defaults)
    assert new == _slice(True)


def _store(kind: str, gates: Any = None) -> Store:
    """A store whose strategies are exercised without storage (preparation needs none)."""
    (rt,) = [t for t in BUILTIN_TYPES if t.kind == kind and t.version == "v1"]
    return Store(rt, cast(Any, None), gates=gates)


def test_the_server_gates_reach_the_strategies_and_their_status_writes() -> None:
    on = _store("Pod", _everything_on)
    pod: Obj = {"metadata": {"name": "p"}, "spec": _pod_spec()}
    on.strategy.prepare_for_create(pod)
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    default = _store("Pod")
    status = default.subresource_strategies["status"]
    old: Obj = {"metadata": {"name": "p"}, "spec": {}, "status": _status(False, False)}
    new: Obj = {"metadata": {"name": "p"}, "spec": {}, "status": _status(True, True)}
    status.prepare_for_update(new, old)
    assert new["status"] == _status(False, False)
