"""The status rules of the replicated workloads (kube's Validate*Status): counts are
never negative, and the partial counts never exceed the whole.  They hold for writes
through ``/status``, where controllers report; the main resource keeps its old status.
Fields and order as kube v1.36 reports them (a StatefulSet's terminatingReplicas is
not checked there, and a DaemonSet has no comparisons)."""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
_RS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
NONNEGATIVE: dict[str, tuple[str, ...]] = {
    "Deployment": (
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ),
    "ReplicaSet": (*_RS, "observedGeneration", "terminatingReplicas"),
    "ReplicationController": (*_RS, "observedGeneration"),
    "StatefulSet": (
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "observedGeneration",
        "collisionCount",
    ),
    "DaemonSet": (
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "collisionCount",
    ),
}
# The counts that may not pass status.replicas, in kube's order.
WITHIN_REPLICAS: dict[str, tuple[str, ...]] = {
    "Deployment": ("updatedReplicas", "readyReplicas", "availableReplicas"),
    "ReplicaSet": _RS[1:],
    "ReplicationController": _RS[1:],
    "StatefulSet": ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
}


def workload_status_errors(kind: str, status: Any) -> list[FieldError]:
    """``status``'s problems for a workload of ``kind`` (none for other kinds)."""
    if not isinstance(status, dict):
        return []
    errs: list[FieldError] = []
    for name in NONNEGATIVE.get(kind, ()):
        errs += field.nonnegative(f"status.{name}", status.get(name))
    within = WITHIN_REPLICAS.get(kind)
    if within is None:
        return errs
    count = _count(status, "replicas")
    for name in within:  # an absent count is 0, which a negative replicas is below
        value = _count(status, name)
        if value > count:
            detail = "cannot be greater than status.replicas"
            errs.append(field.invalid(f"status.{name}", value, detail))
    available, ready = _count(status, "availableReplicas"), _count(status, "readyReplicas")
    if available > ready:
        whole = "status.readyReplicas" if kind == "StatefulSet" else "readyReplicas"
        detail = f"cannot be greater than {whole}"
        errs.append(field.invalid("status.availableReplicas", available, detail))
    return errs


def _count(status: Obj, name: str) -> int:
    value = status.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
