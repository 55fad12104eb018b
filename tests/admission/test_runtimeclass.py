"""RuntimeClass admission: existence, overhead, node selector and tolerations, with
kube's messages (taken from a kube-apiserver v1.36), over a real store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed

from platform_api.admission.interface import Attributes
from platform_api.admission.runtimeclass import RuntimeClassAdmission
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

Obj = dict[str, Any]
SCHEME = builtin_scheme()
PODS = SCHEME.lookup("", "v1", "pods")


@pytest.fixture
def plugin(tmp_path: Path) -> RuntimeClassAdmission:
    storage = LMDBStorage(open_environment(str(tmp_path), 64 * 2**20), lambda w: succeed(w()))
    rt = SCHEME.lookup("node.platform.io", "v1", "runtimeclasses")
    assert rt is not None
    store = Store(rt, storage)
    for name, extra in (
        (
            "rc",
            {
                "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                "scheduling": {
                    "nodeSelector": {"pool": "a"},
                    "tolerations": [
                        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}
                    ],
                },
            },
        ),
        ("plain", {}),
    ):
        obj = {"kind": "RuntimeClass", "metadata": {"name": name}, "handler": "runc", **extra}
        ensureDeferred(store.create("", obj))
    return RuntimeClassAdmission(storage, store.prefix)


def attrs(operation: str = "CREATE", subresource: str = "") -> Attributes:
    assert PODS is not None
    return Attributes(operation, PODS, subresource, "default", "p", UserInfo("u"), False)


def pod(**spec: Any) -> Obj:
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def refused(call: Any) -> str:
    with pytest.raises(StatusError) as e:
        call()
    assert e.value.code == 403
    return str(e.value.message)


def test_missing_runtime_class(plugin: RuntimeClassAdmission) -> None:
    obj = pod(runtimeClassName="nope")
    assert refused(lambda: plugin.admit(attrs(), obj, None)) == (
        'pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found'
    )


def test_overhead_selector_and_tolerations_are_added(plugin: RuntimeClassAdmission) -> None:
    obj = pod(
        runtimeClassName="rc",
        nodeSelector={"zone": "z"},
        tolerations=[{"key": "dedicated", "operator": "Exists"}],
    )
    plugin.admit(attrs(), obj, None)
    spec = obj["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"zone": "z", "pool": "a"}
    assert spec["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    plugin.validate(attrs(), obj, None)
    plain = pod(runtimeClassName="rc")
    plugin.admit(attrs(), plain, None)
    assert plain["spec"]["tolerations"] == [
        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_selector_conflict(plugin: RuntimeClassAdmission) -> None:
    obj = pod(runtimeClassName="rc", nodeSelector={"pool": "b"})
    assert refused(lambda: plugin.admit(attrs(), obj, None)) == (
        'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[pool] = a; '
        "pod.spec.nodeSelector[pool] = b"
    )


def test_overhead_must_match(plugin: RuntimeClassAdmission) -> None:
    mismatch = pod(runtimeClassName="rc", overhead={"cpu": "1"})
    assert refused(lambda: plugin.admit(attrs(), mismatch, None)) == (
        "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's "
        "defined Overhead"
    )
    same = pod(runtimeClassName="rc", overhead={"cpu": "0.25", "memory": "120Mi"})
    plugin.admit(attrs(), same, None)
    plugin.validate(attrs(), same, None)
    changed = pod(runtimeClassName="rc", overhead={"cpu": "2", "memory": "120Mi"})
    assert "doesn't match" in refused(lambda: plugin.validate(attrs(), changed, None))


def test_overhead_without_a_class_that_defines_one(plugin: RuntimeClassAdmission) -> None:
    message = (
        'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding '
        "RuntimeClass defined Overhead"
    )
    for obj in (pod(overhead={"cpu": "1"}), pod(runtimeClassName="plain", overhead={"cpu": "1"})):
        plugin.admit(attrs(), obj, None)
        assert refused(lambda obj=obj: plugin.validate(attrs(), obj, None)) == message


def test_only_pod_creates(plugin: RuntimeClassAdmission) -> None:
    obj = pod(runtimeClassName="nope")
    plugin.admit(attrs("UPDATE"), obj, obj)
    plugin.admit(attrs(subresource="status"), obj, None)
    plugin.validate(attrs("UPDATE"), obj, obj)
