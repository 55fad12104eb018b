"""What a ResourceClaim costs a quota: kube's claimEvaluator (its worst case per device
class, and the extended resources a class stands for)."""

from __future__ import annotations

from typing import Any

from platform_api.admission.quota.deviceclaims import (
    DeviceClaimEvaluator,
    DeviceClasses,
    devices_by_class,
)

Obj = dict[str, Any]
GPU = {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": "example.com/gpu"}}
NIC = {"metadata": {"name": "nic"}, "spec": {}}


def claim(*requests: Obj) -> Obj:
    return {"spec": {"devices": {"requests": list(requests)}}}


def exactly(cls: str, **rest: Any) -> Obj:
    return {"name": "r", "exactly": {"deviceClassName": cls, **rest}}


def test_devices_are_counted_per_class_at_their_worst() -> None:
    alternatives = {
        "name": "r",
        "firstAvailable": [
            {"name": "a", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 3},
            {"name": "b", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
            {"name": "c", "deviceClassName": "nic", "allocationMode": "All"},
        ],
    }
    wanted = claim(
        exactly("gpu", allocationMode="ExactCount", count=2),
        alternatives,
        exactly("nic", allocationMode="Sometimes"),  # an unknown mode counts nothing
    )
    assert devices_by_class(wanted) == {"gpu": 5, "nic": 32}


def _amounts(usage: Obj) -> dict[str, str]:
    return {name: str(q) for name, q in usage.items()}


def test_usage_names_the_class_devices_and_its_extended_resources() -> None:
    evaluator = DeviceClaimEvaluator(DeviceClasses(lambda: [GPU, NIC]))
    usage = evaluator.usage(claim(exactly("gpu", allocationMode="ExactCount", count=2)))
    assert _amounts(usage) == {
        "count/resourceclaims.resource.platform.io": "1",
        "count/resourceclaims.resource.k8s.io": "1",
        "gpu.deviceclass.resource.platform.io/devices": "2",
        "gpu.deviceclass.resource.k8s.io/devices": "2",
        "requests.deviceclass.resource.platform.io/gpu": "2",
        "requests.deviceclass.resource.kubernetes.io/gpu": "2",
        "requests.example.com/gpu": "2",
    }


def test_a_quota_names_extended_resources_only_of_classes_that_exist() -> None:
    evaluator = DeviceClaimEvaluator(DeviceClasses(lambda: [GPU, NIC]))
    names = [
        "count/resourceclaims.resource.platform.io",
        "x.deviceclass.resource.platform.io/devices",  # any class: kube matches the suffix
        "requests.example.com/gpu",  # GPU's extended resource
        "requests.deviceclass.resource.platform.io/nic",  # implicit, of an existing class
        "requests.deviceclass.resource.platform.io/gpu",
        "requests.example.com/fpga",  # no class stands for it
        "requests.cpu",
    ]
    assert evaluator.matching_resources(names) == names[:5]
    without_classes = DeviceClaimEvaluator()
    assert without_classes.matching_resources(names) == names[:2]
