"""The pod evaluator: a pod's count, and its compute requests and limits.

Requests sum over the containers (and sidecars), against the largest init container;
pod-level ``spec.resources`` override them, and ``spec.overhead`` is added.  Terminal
pods, and pods past their deletion grace period, hold only ``count/pods``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.quota import scopes
from platform_api.admission.quota.evaluators import Evaluator
from platform_api.admission.quota.resources import ONE, ResourceList, add, add_quantity, from_object
from platform_api.registry.quota_validation import (
    HUGEPAGES_PREFIX,
    REQUESTS_HUGEPAGES_PREFIX,
    REQUESTS_PREFIX,
    is_extended,
    is_native,
)
from platform_api.scheme.decoding import parse_time
from platform_api.scheme.gonames import DecodeError

Obj = dict[str, Any]
DEVICE_CLASS_PREFIX = "deviceclass.resource.platform.io/"
RESOURCES = (
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
)
_CONSTRAINED = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
_POD_LEVEL = ("cpu", "memory")


class PodEvaluator(Evaluator):
    scoped = True

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        super().__init__("", "pods")
        self.clock = clock

    def handles(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        if attrs.subresource == "resize":
            return attrs.operation == "UPDATE"
        if attrs.subresource:
            return False
        if attrs.operation == "UPDATE" and obj is not None and old is not None:
            # a pod that becomes (or stops being) terminating moves between scopes
            return scopes.is_terminating(old) != scopes.is_terminating(obj)
        return attrs.operation == "CREATE"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        prefixes = (HUGEPAGES_PREFIX, REQUESTS_HUGEPAGES_PREFIX)
        return [
            n for n in names if n in RESOURCES or n.startswith(prefixes) or _extended_for_quota(n)
        ]

    def scope_matches(self, req: scopes.Requirement, obj: Obj) -> bool:
        return scopes.pod_matches(req, obj)

    def constraints(self, required: list[str], obj: Obj) -> str:
        """Every container must state what a quota on cpu or memory limits."""
        spec = obj.get("spec") or {}
        if _pod_level_set(spec):
            return ""
        wanted = set(required) & set(_CONSTRAINED)
        missing: dict[str, set[str]] = {}
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = container.get("resources") or {}
            has = _compute_usage(
                from_object(resources.get("requests")), from_object(resources.get("limits"))
            )
            for name in wanted - has.keys():
                missing.setdefault(name, set()).add(container.get("name", ""))
        if not missing:
            return ""
        parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
        return "must specify " + "; ".join(parts)

    def usage(self, obj: Obj) -> ResourceList:
        out: ResourceList = {"count/pods": ONE}
        if not self.counts_compute(obj):
            return out
        return add(out, _compute_usage(pod_requests(obj), pod_limits(obj)))

    def counts_compute(self, pod: Obj) -> bool:
        """``QuotaV1Pod``: not terminal, and not past its deletion grace period."""
        if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
            return False
        meta = pod.get("metadata") or {}
        stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
        if stamp and grace is not None:
            try:
                deadline = parse_time(stamp).timestamp() + grace
            except DecodeError:
                return True
            if self.clock() > deadline:
                return False
        return True


def _extended_for_quota(name: str) -> bool:
    """``requests.<extended resource>`` (or of a device class)."""
    if not name.startswith(REQUESTS_PREFIX):
        return False
    base = name[len(REQUESTS_PREFIX) :]
    return not is_native(name) or base.startswith(DEVICE_CLASS_PREFIX)


def _pod_level_set(spec: Obj) -> bool:
    resources = spec.get("resources") or {}
    names = list((resources.get("requests") or {}).keys()) + list(
        (resources.get("limits") or {}).keys()
    )
    return any(n in _POD_LEVEL or n.startswith(HUGEPAGES_PREFIX) for n in names)


def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """``podComputeUsageHelper``: the quota names a set of requests and limits fills."""
    out: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = requests[name]
            out[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            out["limits." + name] = limits[name]
    for name, value in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            out[name] = value
            out[REQUESTS_PREFIX + name] = value
        elif is_extended(name) or name.startswith(DEVICE_CLASS_PREFIX):
            out[REQUESTS_PREFIX + name] = value
    return out


def _aggregate(spec: Obj, key: str) -> ResourceList:
    """Containers and sidecars summed, then at least the largest init container."""
    total: ResourceList = {}
    for container in spec.get("containers") or []:
        total = add(total, from_object((container.get("resources") or {}).get(key)))
    sidecars: ResourceList = {}
    inits: ResourceList = {}
    for container in spec.get("initContainers") or []:
        own = from_object((container.get("resources") or {}).get(key))
        if container.get("restartPolicy") == "Always":
            total = add(total, own)
            sidecars = add(sidecars, own)
            current = dict(sidecars)
        else:
            current = add(own, sidecars)
        _max_into(inits, current)
    _max_into(total, inits)
    return total


def _max_into(target: ResourceList, other: ResourceList) -> None:
    for name, value in other.items():
        if name not in target or value.value > target[name].value:
            target[name] = value


def _pod_level(spec: Obj, key: str, into: ResourceList) -> ResourceList:
    for name, value in from_object((spec.get("resources") or {}).get(key)).items():
        if name in _POD_LEVEL or name.startswith(HUGEPAGES_PREFIX):
            into[name] = value
    return into


def pod_requests(pod: Obj) -> ResourceList:
    spec = pod.get("spec") or {}
    requests = _pod_level(spec, "requests", _aggregate(spec, "requests"))
    return add(requests, from_object(spec.get("overhead")))


def pod_limits(pod: Obj) -> ResourceList:
    spec = pod.get("spec") or {}
    limits = _aggregate(spec, "limits")
    if _pod_level_set(spec):
        limits = _pod_level(spec, "limits", limits)
    for name, value in from_object(spec.get("overhead")).items():
        if name in limits and limits[name].value != Decimal(0):
            limits[name] = add_quantity(limits[name], value)
    return limits
