"""What a ResourceClaim costs a quota (kube's claimEvaluator, resource.platform.io).

A claim counts once (``count/resourceclaims.resource.platform.io``) and charges the
devices it may get, per device class: ``<class>.deviceclass.resource.platform.io/devices``
is a request's count, or 32 (the most an allocation holds) for ``allocationMode: All``;
of a request's ``firstAvailable`` alternatives, the largest each class could take.  With
kube v1.36's DRAExtendedResource (on), the same amounts are charged as extended-resource
requests: ``requests.deviceclass.resource.platform.io/<class>`` and, where the class names
one, ``requests.<its extendedResourceName>``; a quota names them only for classes that
exist.  kube also subtracts what the pod that owns a scheduler-made claim already pays
for; no scheduler makes claims here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.quota.evaluators import Evaluator
from platform_api.admission.quota.resources import ResourceList, add
from platform_api.quantity import Quantity
from platform_api.storage.interface import ListOptions

Obj = dict[str, Any]
GROUP = "resource.platform.io"
CLASSES = (GROUP, "v1", "deviceclasses")  # the store that holds them
# A quota may spell the names in either brand (--serve-upstream-groups): both are charged.
PER_CLASS = (".deviceclass.resource.platform.io/devices", ".deviceclass.resource.k8s.io/devices")
# A class's own extended-resource name, in either brand.
IMPLICIT = ("deviceclass.resource.platform.io/", "deviceclass.resource.kubernetes.io/")
REQUESTS = "requests."
ALL_DEVICES = 32  # kube's AllocationResultsMaxSize: the worst case of allocationMode All


class DeviceClasses:
    """kube's extended-resource cache, read from the DeviceClasses on demand: each class's
    implicit name, and the extended resource a class names (when two name the same one,
    the newer class, then the lower name, has it)."""

    def __init__(self, read: Callable[[], Iterable[Obj]]) -> None:
        self._read = read

    def _classes(self) -> list[Obj]:
        return [c for c in self._read() if isinstance(c, dict)]

    def extended_resource(self, class_name: str) -> str:
        """The extended resource ``class_name`` names ("" for none or no such class)."""
        for found in self._classes():
            if (found.get("metadata") or {}).get("name") == class_name:
                return str((found.get("spec") or {}).get("extendedResourceName") or "")
        return ""

    def has_class_for(self, resource: str) -> bool:
        """Whether some class stands for the extended resource ``resource``."""
        names = {str((c.get("metadata") or {}).get("name", "")) for c in self._classes()}
        if _implicit_class(resource) in names:
            return True
        return any(
            (c.get("spec") or {}).get("extendedResourceName") == resource for c in self._classes()
        )


def classes_in(store: Any) -> DeviceClasses | None:
    """The DeviceClasses a store holds, read on demand (None where DRA is not served)."""
    if store is None:
        return None
    return DeviceClasses(lambda: [s.object for s in store.list("", ListOptions()).items])


def _implicit_class(resource: str) -> str:
    """The class an implicit extended-resource name stands for ("" when it is none)."""
    prefix = next((p for p in IMPLICIT if resource.startswith(p)), "")
    return resource[len(prefix) :] if prefix else ""


def _devices(mode: Any, count: Any) -> int:
    if mode == "ExactCount":
        return count if isinstance(count, int) else 0
    return ALL_DEVICES if mode == "All" else 0  # an unknown mode counts nothing, as kube's


def devices_by_class(claim: Obj) -> dict[str, int]:
    """The devices each class may give the claim's requests (kube's worst case)."""
    out: dict[str, int] = {}
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    for request in (r for r in requests if isinstance(r, dict)):
        alternatives = request.get("firstAvailable")
        if alternatives:
            most: dict[str, int] = {}
            for sub in (s for s in alternatives if isinstance(s, dict)):
                name = str(sub.get("deviceClassName") or "")
                most[name] = max(
                    most.get(name, 0), _devices(sub.get("allocationMode"), sub.get("count"))
                )
            for name, n in most.items():
                out[name] = out.get(name, 0) + n
        elif isinstance(request.get("exactly"), dict):
            exactly = request["exactly"]
            name = str(exactly.get("deviceClassName") or "")
            n = _devices(exactly.get("allocationMode"), exactly.get("count"))
            out[name] = out.get(name, 0) + n
    return out


class DeviceClaimEvaluator(Evaluator):
    """kube's claimEvaluator: the claim's count and devices, by class."""

    def __init__(self, classes: DeviceClasses | None = None) -> None:
        super().__init__(GROUP, "resourceclaims")
        self.classes = classes

    def handles(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        return not attrs.subresource and attrs.operation in ("CREATE", "UPDATE")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n in self.names or n.endswith(PER_CLASS) or self._extended(n)]

    def _extended(self, name: str) -> bool:
        if self.classes is None or not name.startswith(REQUESTS):
            return False
        resource = name[len(REQUESTS) :]
        implicit = _implicit_class(resource)
        if implicit and self.classes.extended_resource(implicit):
            return True  # kube's check of the implicit name: its class names a resource
        return self.classes.has_class_for(resource)

    def usage(self, obj: Obj) -> ResourceList:
        out = super().usage(obj)
        for class_name, n in devices_by_class(obj).items():
            amount = Quantity(Decimal(n))
            charged = {class_name + suffix: amount for suffix in PER_CLASS}
            if self.classes is not None and n > 0:  # kube charges none of a zero amount
                charged.update({REQUESTS + prefix + class_name: amount for prefix in IMPLICIT})
                extended = self.classes.extended_resource(class_name)
                if extended:
                    charged[REQUESTS + extended] = amount
            out = add(out, charged)
        return out
