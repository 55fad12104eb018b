"""DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize: kube's
admission_test.go cases, with kube's messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.plugins import PluginContext
from platform_api.admission.storage.defaultclass import build as build_default
from platform_api.admission.storage.protection import StorageObjectInUseProtection
from platform_api.admission.storage.resize import PersistentVolumeClaimResize
from tests.admission.plugin_kit import Cluster, attrs, refused

Obj = dict[str, Any]
SG = "storage.platform.io"


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def storage_class(name: str, *, default: str = "", beta: str = "", **extra: Any) -> Obj:
    annotations = {}
    if default:
        annotations["storageclass.platform.io/is-default-class"] = default
    if beta:
        annotations["storageclass.beta.platform.io/is-default-class"] = beta
    meta: Obj = {"name": name, "annotations": annotations}
    return {"apiVersion": f"{SG}/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "example.com/x", **extra}  # fmt: skip


def claim(name: str = "c", cls: str | None = None, size: str = "1Gi", **meta: Any) -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", **meta}, "spec": spec}  # fmt: skip


def ctx(cluster: Cluster) -> PluginContext:
    return PluginContext(None, cluster.storage, None, cluster.stores, None, None)  # type: ignore[arg-type]


def defaulted(cluster: Cluster, obj: Obj) -> Any:
    build_default(ctx(cluster)).admit(attrs("CREATE", "persistentvolumeclaims", "c"), obj, None)
    return obj["spec"].get("storageClassName")


def test_no_default_class_leaves_the_claim(cluster: Cluster) -> None:
    cluster.create("storageclasses", storage_class("plain"), SG)
    cluster.create("storageclasses", storage_class("not", default="false"), SG)
    assert defaulted(cluster, claim()) is None


@pytest.mark.parametrize("marks", [{"default": "true"}, {"beta": "true"}])
def test_default_class_is_set(cluster: Cluster, marks: dict[str, str]) -> None:
    cluster.create("storageclasses", storage_class("fast", **marks), SG)
    assert defaulted(cluster, claim()) == "fast"


def test_a_class_given_is_kept(cluster: Cluster) -> None:
    cluster.create("storageclasses", storage_class("fast", default="true"), SG)
    assert defaulted(cluster, claim(cls="")) == ""
    assert defaulted(cluster, claim(cls="other")) == "other"
    beta = claim(annotations={"volume.beta.platform.io/storage-class": "old"})
    assert defaulted(cluster, beta) is None


def test_newest_default_wins_then_name(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    store = cluster.store("storageclasses", SG)
    for name, at in (("b-old", 100.0), ("z-new", 200.0), ("a-new", 200.0)):
        monkeypatch.setattr(store, "clock", lambda at=at: at)
        cluster.create("storageclasses", storage_class(name, default="true"), SG)
    assert defaulted(cluster, claim()) == "a-new"


def test_other_resources_and_updates_are_ignored(cluster: Cluster) -> None:
    cluster.create("storageclasses", storage_class("fast", default="true"), SG)
    plugin = build_default(ctx(cluster))
    obj = claim()
    plugin.admit(attrs("UPDATE", "persistentvolumeclaims", "c"), obj, claim())
    plugin.admit(attrs("CREATE", "persistentvolumeclaims", "c", sub="status"), obj, None)
    assert "storageClassName" not in obj["spec"]


def test_protection_finalizers() -> None:
    plugin = StorageObjectInUseProtection()
    pvc = claim(finalizers=["other"])
    plugin.admit(attrs("CREATE", "persistentvolumeclaims", "c"), pvc, None)
    assert pvc["metadata"]["finalizers"] == ["other", "platform.io/pvc-protection"]
    plugin.admit(attrs("CREATE", "persistentvolumeclaims", "c"), pvc, None)
    assert pvc["metadata"]["finalizers"] == ["other", "platform.io/pvc-protection"]
    pv: Obj = {"metadata": {"name": "v"}, "spec": {}}
    plugin.admit(attrs("CREATE", "persistentvolumes", "v"), pv, None)
    assert pv["metadata"]["finalizers"] == ["platform.io/pv-protection"]
    other: Obj = {"metadata": {"name": "p"}}
    plugin.admit(attrs("CREATE", "pods", "p"), other, None)
    plugin.admit(attrs("UPDATE", "persistentvolumes", "v"), other, None)
    assert "finalizers" not in other["metadata"]


class TestResize:
    def setup(self, cluster: Cluster) -> PersistentVolumeClaimResize:
        cluster.create("storageclasses", storage_class("grows", allowVolumeExpansion=True), SG)
        cluster.create("storageclasses", storage_class("fixed", allowVolumeExpansion=False), SG)
        cluster.create("storageclasses", storage_class("unset"), SG)
        return PersistentVolumeClaimResize(cluster.store("storageclasses", SG))

    def check(self, plugin: Any, new: Obj, old: Obj, sub: str = "") -> str:
        a = attrs("UPDATE", "persistentvolumeclaims", "c", sub=sub)
        try:
            plugin.validate(a, new, old)
        except Exception:
            return refused(lambda: plugin.validate(a, new, old)).message
        return ""

    def test_cases(self, cluster: Cluster) -> None:
        plugin = self.setup(cluster)
        unbound = claim(cls="grows", size="1Gi")
        bound = {**claim(cls="grows", size="1Gi"), "status": {"phase": "Bound"}}
        not_bound = 'persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded'
        no_resize = (
            'persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be '
            "resized and the storageclass that provisions the pvc must support resize"
        )
        assert self.check(plugin, claim(cls="grows", size="2Gi"), unbound) == not_bound
        assert self.check(plugin, claim(cls="grows", size="2Gi"), bound) == ""
        assert self.check(plugin, claim(cls="grows", size="1024Mi"), bound) == ""
        assert self.check(plugin, claim(cls="grows", size="500Mi"), unbound) == ""
        for cls in ("fixed", "unset", "missing", ""):
            old = {**claim(cls=cls), "status": {"phase": "Bound"}}
            assert self.check(plugin, claim(cls=cls, size="2Gi"), old) == no_resize
        changed = self.check(plugin, claim(cls="fixed", size="2Gi"), bound)
        assert changed == no_resize
        assert self.check(plugin, claim(cls="fixed", size="2Gi"), unbound, sub="status") == ""
