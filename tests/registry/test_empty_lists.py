"""Explicitly empty lists through the registry store, as kube-apiserver v1.36 answered
them (reference): Go decodes ``[]`` as a non-nil slice, which its defaulting keeps and
its validation sees, and its JSON leaves out of what is stored and answered."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from twisted.internet.defer import succeed

from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.synchronous import run

Obj = dict[str, Any]
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
REQUIRED = (
    'HorizontalPodAutoscaler.autoscaling "h" is invalid: spec.behavior.scaleUp.policies: '
    "Required value: must specify at least one Policy"
)


@pytest.fixture
def storage(tmp_path: Any) -> LMDBStorage:
    return LMDBStorage(open_environment(str(tmp_path / "db"), 64 * 2**20), lambda w: succeed(w()))


def store(storage: LMDBStorage, group: str, plural: str) -> Store:
    version = "v2" if group == "autoscaling" else "v1"
    rt = builtin_scheme().lookup(group, version, plural)
    assert rt is not None
    return Store(rt, storage)


def autoscaler(behavior: Obj | None = None) -> Obj:
    spec: Obj = {"scaleTargetRef": TARGET, "maxReplicas": 3}
    if behavior is not None:
        spec["behavior"] = behavior
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": spec,
    }


def test_an_autoscaler_with_no_policies_is_refused_not_defaulted(storage: LMDBStorage) -> None:
    hpas = store(storage, "autoscaling", "horizontalpodautoscalers")
    with pytest.raises(StatusError) as e:
        run(hpas.create("default", autoscaler({"scaleUp": {"policies": []}})))
    assert (e.value.code, e.value.reason, e.value.message) == (422, "Invalid", REQUIRED)
    with pytest.raises(StatusError):
        run(hpas.create("default", autoscaler({"scaleUp": {"policies": []}}), dry_run=True))


def test_an_update_to_no_policies_is_refused_and_changes_nothing(storage: LMDBStorage) -> None:
    hpas = store(storage, "autoscaling", "horizontalpodautoscalers")
    created = run(hpas.create("default", autoscaler({"scaleUp": {"selectPolicy": "Min"}})))
    policies = created.object["spec"]["behavior"]["scaleUp"]["policies"]
    assert [p["type"] for p in policies] == ["Pods", "Percent"]  # defaulted when left out

    def emptied(old: Obj) -> Obj:
        new = copy.deepcopy(old)
        new["spec"]["behavior"]["scaleUp"]["policies"] = []
        return new

    with pytest.raises(StatusError) as e:
        run(hpas.update("default", "h", emptied))
    assert (e.value.code, e.value.message) == (422, REQUIRED)
    assert hpas.get("default", "h").object == created.object


def test_an_empty_list_the_kind_fills_in_is_kept(storage: LMDBStorage) -> None:
    """A namespace's ``finalizers: []`` gets ``kubernetes`` added, as kube's strategy
    adds it to the (non-nil) list it is given."""
    namespaces = store(storage, "", "namespaces")
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "n"},
        "spec": {"finalizers": []},
    }
    created = run(namespaces.create("", body))
    assert created.object["spec"] == {"finalizers": ["kubernetes"]}


def test_empty_lists_are_not_stored(storage: LMDBStorage) -> None:
    pods = store(storage, "", "pods")
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {}, "finalizers": []},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": []}], "volumes": []},
    }
    created = run(pods.create("default", body)).object
    assert "labels" not in created["metadata"] and "finalizers" not in created["metadata"]
    assert "volumes" not in created["spec"] and "ports" not in created["spec"]["containers"][0]
