"""The storage protection controllers over real storage, the hub and a test clock: a
claim, volume or attributes class deleted while in use waits, and goes once unused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.storage.protection import PV_PROTECTION, PVC_PROTECTION, VAC_PROTECTION
from platform_api.controllers.protection import PVCProtection, PVProtection, VACProtection
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
CLAIMS, PODS, VOLUMES = (
    ("", "v1", "persistentvolumeclaims"),
    ("", "v1", "pods"),
    ("", "v1", "persistentvolumes"),
)
CLASSES = ("storage.platform.io", "v1", "volumeattributesclasses")


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        stores, hub, clock = self.cluster.stores, self.cluster.hub, self.cluster.clock
        self.start(
            PVCProtection(stores[CLAIMS], stores[PODS], hub, clock),
            PVProtection(stores[VOLUMES], hub, clock),
            VACProtection(stores[CLASSES], stores[CLAIMS], stores[VOLUMES], hub, clock),
        )

    def set_status(self, kind: tuple[str, str, str], name: str, status: Obj) -> None:
        def apply(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = status
            return existing

        self.cluster.run(self.cluster.stores[kind].update("", name, apply, subresource="status"))
        self.cluster.settle()


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def claim(name: str, finalizer: bool = True, **spec: Any) -> Obj:
    meta: Obj = {"name": name}
    if finalizer:
        meta["finalizers"] = [PVC_PROTECTION]
    resources = {"requests": {"storage": "1Gi"}}
    return {
        "metadata": meta,
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": resources, **spec},
    }


def pod(name: str, claim_name: str, node: str = "") -> Obj:
    spec: Obj = {
        "containers": [{"name": "c", "image": "i"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
    }
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name}, "spec": spec}


def test_an_unused_claim_goes_at_once(s: Setup) -> None:
    s.create(CLAIMS, claim("c1"), "ns")
    s.create(PODS, pod("unscheduled", "c1"), "ns")  # no kubelet will start it
    s.delete(CLAIMS, "c1", "ns")
    assert s.get(CLAIMS, "c1", "ns") is None


def test_a_claim_waits_for_the_scheduled_pod_that_uses_it(s: Setup) -> None:
    s.create(CLAIMS, claim("c1"), "ns")
    s.create(PODS, pod("web", "c1", node="n1"), "ns")
    s.delete(CLAIMS, "c1", "ns")
    waiting = s.get(CLAIMS, "c1", "ns")
    assert waiting is not None and waiting["metadata"]["finalizers"] == [PVC_PROTECTION]
    assert waiting["metadata"].get("deletionTimestamp")
    s.delete(PODS, "web", "ns")  # terminating: its volumes may still be mounted
    assert s.get(CLAIMS, "c1", "ns") is not None
    s.delete(PODS, "web", "ns", grace_period=0)  # its kubelet, once it has stopped
    assert s.get(CLAIMS, "c1", "ns") is None


def test_claims_made_before_the_admission_plugin_get_the_finalizer(s: Setup) -> None:
    s.create(CLAIMS, claim("old", finalizer=False), "ns")
    got = s.get(CLAIMS, "old", "ns")
    assert got is not None and got["metadata"]["finalizers"] == [PVC_PROTECTION]


def volume(name: str) -> Obj:
    spec = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/x"},
    }
    return {"metadata": {"name": name, "finalizers": [PV_PROTECTION]}, "spec": spec}


def test_a_bound_volume_waits_until_released(s: Setup) -> None:
    s.create(VOLUMES, volume("pv1"))
    s.set_status(VOLUMES, "pv1", {"phase": "Bound"})
    s.delete(VOLUMES, "pv1")
    assert s.get(VOLUMES, "pv1") is not None
    s.set_status(VOLUMES, "pv1", {"phase": "Released"})
    assert s.get(VOLUMES, "pv1") is None


def test_an_attributes_class_waits_for_the_claims_that_name_it(s: Setup) -> None:
    gold = {
        "metadata": {"name": "gold", "finalizers": [VAC_PROTECTION]},
        "driverName": "d",
        "parameters": {"a": "b"},
    }
    s.create(CLASSES, gold)
    s.create(CLAIMS, claim("c1", volumeAttributesClassName="gold"), "ns")
    s.delete(CLASSES, "gold")
    assert s.get(CLASSES, "gold") is not None
    s.delete(CLAIMS, "c1", "ns")  # unused itself: goes, and frees the class
    assert s.get(CLAIMS, "c1", "ns") is None
    assert s.get(CLASSES, "gold") is None
