"""Usage evaluators: what an object of a kind costs a quota (kube's ``quota.Evaluator``).

Pods, services and persistent volume claims have evaluators of their own; every other
resource is counted as ``count/<resource>[.<group>]`` (configmaps, secrets,
replicationcontrollers and resourcequotas also under their legacy names).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_CEILING, Decimal
from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.quota import scopes
from platform_api.admission.quota.resources import ONE, ZERO, ResourceList, add, from_object
from platform_api.quantity import Quantity
from platform_api.scheme.types import upstream_group

Obj = dict[str, Any]
# A quota may name a group by either of its names (under --serve-upstream-groups clients
# write kube's): usage is reported under both, and each quota keeps the names it holds.
STORAGE_CLASS_SUFFIXES = (".storageclass.storage.platform.io/", ".storageclass.storage.k8s.io/")
STORAGE_CLASS_ANNOTATIONS = (
    "volume.beta.platform.io/storage-class",
    "volume.beta.kubernetes.io/storage-class",
)
LEGACY_ALIASES = {
    "configmaps": "configmaps",
    "resourcequotas": "resourcequotas",
    "replicationcontrollers": "replicationcontrollers",
    "secrets": "secrets",
}


def count_name(group: str, plural: str) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/pods``, ``count/deployments.apps``."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


class Evaluator:
    """An object-count evaluator; the kinds with richer usage subclass it."""

    scoped = False  # whether the kind's objects can match quota scopes

    def __init__(self, group: str, plural: str) -> None:
        self.group, self.plural = group, plural
        alias = LEGACY_ALIASES.get(plural) if not group else None
        names = dict.fromkeys(
            (count_name(group, plural), count_name(upstream_group(group), plural))
        )
        self.names = tuple(names) + ((alias,) if alias else ())

    def handles(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        return not attrs.subresource and attrs.operation == "CREATE"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n in self.names]

    def scope_matches(self, req: scopes.Requirement, obj: Obj) -> bool:
        return False

    def constraints(self, required: list[str], obj: Obj) -> str:
        """Why ``obj`` cannot be charged against a quota on ``required`` ("" when it can)."""
        return ""

    def usage(self, obj: Obj) -> ResourceList:
        return dict.fromkeys(self.names, ONE)


def matches(ev: Evaluator, quota: Obj, obj: Obj) -> bool:
    """``generic.Matches``: the quota limits something of the kind, and every scope fits."""
    hard = ((quota.get("status") or {}).get("hard") or {}).keys()
    if not ev.matching_resources(hard):
        return False
    return all(ev.scope_matches(req, obj) for req in scopes.quota_selectors(quota))


def matching_scopes(
    ev: Evaluator, obj: Obj, reqs: list[scopes.Requirement]
) -> list[scopes.Requirement]:
    return [req for req in reqs if ev.scope_matches(req, obj)]


def uncovered_scopes(
    ev: Evaluator, limited: list[scopes.Requirement], matched: list[scopes.Requirement]
) -> list[scopes.Requirement]:
    return scopes.uncovered(limited, matched) if ev.scoped else []


def usage_stats(
    ev: Evaluator, objects: Iterable[Obj], quota: Obj, names: list[str]
) -> ResourceList:
    """``CalculateUsageStats``: the summed usage of the objects in the quota's scopes."""
    used: ResourceList = dict.fromkeys(names, ZERO)
    selectors = scopes.quota_selectors(quota)
    for obj in objects:
        if all(ev.scope_matches(req, obj) for req in selectors):
            used = add(used, ev.usage(obj))
    return used


class ServiceEvaluator(Evaluator):
    RESOURCES = ("count/services", "services", "services.nodeports", "services.loadbalancers")

    def __init__(self) -> None:
        super().__init__("", "services")
        self.names = self.RESOURCES

    def handles(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        return not attrs.subresource and attrs.operation in ("CREATE", "UPDATE")

    def usage(self, obj: Obj) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = spec.get("ports") or []
        node_ports, balancers = 0, 0
        if spec.get("type") == "NodePort":
            node_ports = len(ports)
        elif spec.get("type") == "LoadBalancer":
            balancers = 1
            if spec.get("allocateLoadBalancerNodePorts") is False:
                node_ports = sum(1 for p in ports if p.get("nodePort"))
            else:
                node_ports = len(ports)
        return {
            "count/services": ONE,
            "services": ONE,
            "services.loadbalancers": Quantity(Decimal(balancers)),
            "services.nodeports": Quantity(Decimal(node_ports)),
        }


class ClaimEvaluator(Evaluator):
    """PersistentVolumeClaims: their number and storage, also per storage class."""

    scoped = True
    RESOURCES = ("persistentvolumeclaims", "requests.storage")

    def __init__(self) -> None:
        super().__init__("", "persistentvolumeclaims")

    def handles(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        if attrs.subresource == "status":
            return obj is not None and old is not None and requires_replenish(obj, old)
        return not attrs.subresource and attrs.operation in ("CREATE", "UPDATE")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        suffixes = tuple(s + r for s in STORAGE_CLASS_SUFFIXES for r in self.RESOURCES)
        return [n for n in names if n in self.names or n in self.RESOURCES or n.endswith(suffixes)]

    def scope_matches(self, req: scopes.Requirement, obj: Obj) -> bool:
        return scopes.pvc_matches(req, obj)

    def usage(self, obj: Obj) -> ResourceList:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        klass = next((annotations[a] for a in STORAGE_CLASS_ANNOTATIONS if annotations.get(a)), "")
        klass = klass or (obj.get("spec") or {}).get("storageClassName") or ""
        out: ResourceList = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
        storage = claim_storage(obj)
        if storage is not None:
            out["requests.storage"] = storage
        for suffix in STORAGE_CLASS_SUFFIXES if klass else ():
            out[klass + suffix + "persistentvolumeclaims"] = ONE
            if storage is not None:
                out[klass + suffix + "requests.storage"] = storage
        return out


def _round_up(q: Quantity) -> Quantity:
    whole = q.value.to_integral_value(rounding=ROUND_CEILING)
    return q if whole == q.value else Quantity(whole, q.format)


def claim_storage(pvc: Obj) -> Quantity | None:
    """The claim's requested storage, or what was allocated when that is more."""
    requested = from_object(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))
    if "storage" not in requested:
        return None
    result = _round_up(requested["storage"])
    allocated = from_object((pvc.get("status") or {}).get("allocatedResources")).get("storage")
    if allocated is not None and allocated.value > result.value:
        result = _round_up(allocated)
    return result


def _allocated(pvc: Obj) -> Decimal | None:
    q = from_object((pvc.get("status") or {}).get("allocatedResources")).get("storage")
    return q.value if q is not None else None


def requires_replenish(pvc: Obj, old: Obj) -> bool:
    """A status write that changes what the claim holds (its allocation or classes)."""
    if _allocated(pvc) != _allocated(old):
        return True
    return scopes.volume_attributes_classes(pvc) != scopes.volume_attributes_classes(old)
