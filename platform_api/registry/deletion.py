"""The deletion protocol's rules (kube's registry.Store deletion), used by store.py.

Which finalizers a delete adds follows kube's propagation policies: an explicit
``orphanDependents``/``propagationPolicy`` decides; otherwise finalizers already on the
object do; otherwise the kind's default (Background, but Orphan for v1 Jobs and
ReplicationControllers, whose pods such a delete leaves).
Orphan adds ``orphan`` and Foreground ``foregroundDeletion``; the garbage collector
does the rest and removes them.

Kinds with graceful deletion (Pods) follow kube's BeforeDelete: a delete stamps
``deletionTimestamp`` (now plus the grace period) and ``deletionGracePeriodSeconds``;
with a period of 0 the object then goes at once, otherwise it stays until a later
delete shortens the period to 0 (a kubelet's, once the pod has stopped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from platform_api import errors
from platform_api.codec.goshape import shape
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import Preconditions
from platform_api.timestamps import format_timestamp, parse_timestamp

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
# What kube's BeforeDelete decides: delete without a grace period (or let finalizers
# decide), start or shorten a graceful deletion, or leave a pending one as it is.
IMMEDIATE, GRACEFUL, PENDING = "immediate", "graceful", "pending"


# kube's rest.Unsupported: a kind (Events) whose deletes add no garbage-collection
# finalizer, whatever they ask for, and drop those it carries.
UNSUPPORTED = "Unsupported"


def _policy(
    finalizers: list[str], propagation: str | None, orphan: bool | None, default: str
) -> str:
    if default == UNSUPPORTED:  # the kind's dependents are never the delete's business
        return default
    if orphan is not None:
        return "Orphan" if orphan else "Background"
    if propagation is not None:
        return propagation
    if ORPHAN in finalizers:
        return "Orphan"
    if FOREGROUND in finalizers:
        return "Foreground"
    return default


def deletion_finalizers(
    obj: dict[str, Any],
    propagation: str | None,
    orphan: bool | None = None,
    default: str = "Background",
) -> list[str]:
    """The object's finalizers once this delete's propagation policy (else the kind's
    ``default``) is applied."""
    current = list(obj.get("metadata", {}).get("finalizers") or [])
    policy = _policy(current, propagation, orphan, default)
    wanted = {"Orphan": ORPHAN, "Foreground": FOREGROUND}.get(policy)
    out = [f for f in current if f not in (ORPHAN, FOREGROUND) or f == wanted]
    if wanted and wanted not in out:
        out.append(wanted)
    return out


class _PrepareForDelete(Protocol):
    def prepare_for_delete(self, obj: dict[str, Any]) -> None: ...


def requested_grace(requested: int | None) -> int | None:
    """The caller's ``gracePeriodSeconds`` as kube's delete path reads it: a negative
    period is one second."""
    return 1 if requested is not None and requested < 0 else requested


def go_seconds(seconds: int) -> float:
    """``time.Second * time.Duration(seconds)`` as Go computes it, in int64 nanoseconds
    that wrap: kube stamps a period past ~292 years that way, never out of range."""
    nanoseconds = (seconds * 1_000_000_000 + 2**63) % 2**64 - 2**63
    return nanoseconds / 1e9


def before_delete(
    obj: dict[str, Any], period: int | None, requested: int | None, now: float
) -> str:
    """kube's rest.BeforeDelete, in place: ``period`` is the kind's grace period for this
    delete (None: no graceful deletion), ``requested`` the caller's.  A deletion under
    way may only be shortened; one already at 0 is finished."""
    if period is None:
        return IMMEDIATE
    meta = obj["metadata"]
    if meta.get("deletionTimestamp"):
        current = meta.get("deletionGracePeriodSeconds")
        if not current:
            return IMMEDIATE
        if requested is None or requested >= current:
            return PENDING
        started = parse_timestamp(meta["deletionTimestamp"])
        if started is not None:
            moved = started - go_seconds(current) + go_seconds(requested)
            meta["deletionTimestamp"] = format_timestamp(moved)
        meta["deletionGracePeriodSeconds"] = requested
        return GRACEFUL
    meta["deletionTimestamp"] = format_timestamp(now + go_seconds(period))
    meta["deletionGracePeriodSeconds"] = period
    if meta.get("generation", 0) > 0:
        meta["generation"] += 1
    return GRACEFUL


def has_pending_finalizers(obj: dict[str, Any], kind: str) -> bool:
    """Whether something must finish before ``obj`` goes (namespaces: spec.finalizers)."""
    meta = obj.get("metadata", {})
    if meta.get("finalizers"):
        return True
    if kind == "Namespace":
        return bool(obj.get("spec", {}).get("finalizers"))
    return False


def finishes_deletion(obj: dict[str, Any], kind: str) -> bool:
    """An object being deleted that nothing holds any more (no finalizer, no grace period
    left) goes: after the write that let it go, or the delete that marked it.  A
    Namespace also waits for its ``spec.finalizers`` (kube's
    ShouldDeleteNamespaceDuringUpdate): another component may still be cleaning it up."""
    meta = obj.get("metadata", {})
    if kind == "Namespace" and (obj.get("spec") or {}).get("finalizers"):
        return False
    return (
        bool(meta.get("deletionTimestamp"))
        and not meta.get("finalizers")
        and meta.get("deletionGracePeriodSeconds", 0) == 0
    )


def set_finalizers(obj: dict[str, Any], finalizers: Sequence[str]) -> None:
    meta = obj["metadata"]
    if finalizers:
        meta["finalizers"] = list(finalizers)
    else:
        meta.pop("finalizers", None)


def mark_deleting(
    obj: dict[str, Any], finalizers: Sequence[str], now: str, kind: str, strategy: _PrepareForDelete
) -> dict[str, Any]:
    """The first phase of a deletion, in place: the finalizers set, and (once)
    ``deletionTimestamp`` stamped, the generation moved on (kube's markAsDeleting: the
    object's controllers now have a new state to act on) and the kind's own preparation
    run."""
    meta = obj["metadata"]
    set_finalizers(obj, finalizers)
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = now
        if meta.get("generation", 0) > 0:
            meta["generation"] += 1
        strategy.prepare_for_delete(obj)
        if kind == "Namespace":  # kube's namespace storage sets no grace period
            obj.setdefault("status", {})["phase"] = "Terminating"
        else:
            meta["deletionGracePeriodSeconds"] = 0
        shape(obj)  # the new fields in their places
    return obj


def deleted_status(group: str, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The Success Status kube answers for kinds that do not return the deleted object."""
    meta = obj.get("metadata", {})
    details: dict[str, Any] = {"name": meta.get("name", "")}
    if group:
        details["group"] = group
    details["kind"] = plural
    details["uid"] = meta.get("uid", "")
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _namespace_precondition_failure(
    preconditions: Preconditions, current: dict[str, Any]
) -> str | None:
    """Why a Namespace's (or a CRD's) delete preconditions fail: kube's storage checks
    them itself, in its own words (and names the resource)."""
    meta = current.get("metadata") or {}
    for given, key, what in (
        (preconditions.uid, "uid", "UID"),
        (preconditions.resource_version, "resourceVersion", "ResourceVersion"),
    ):
        if given is not None and given != meta.get(key):
            return (
                f"Precondition failed: {what} in precondition: {given}, {what} in object "
                f"meta: {meta.get(key, '')}"
            )
    return None


def _precondition_failure(preconditions: Preconditions, current: dict[str, Any]) -> str | None:
    """Why a delete's preconditions fail, in the words of kube's BeforeDelete (a race
    with a write in between fails in storage, in storage's words)."""
    meta = current.get("metadata") or {}
    if preconditions.uid is not None and preconditions.uid != meta.get("uid"):
        return (
            f"the UID in the precondition ({preconditions.uid}) does not match the UID in "
            f"record ({meta.get('uid', '')}). The object might have been deleted and then "
            "recreated"
        )
    version = preconditions.resource_version
    if version is not None and version != meta.get("resourceVersion"):
        return (
            f"the ResourceVersion in the precondition ({version}) does not match the "
            f"ResourceVersion in record ({meta.get('resourceVersion', '')}). The object "
            "might have been modified"
        )
    return None


_OWN_PRECONDITIONS = {("", "Namespace"), ("apiextensions.platform.io", "CustomResourceDefinition")}


def check_preconditions(
    rt: ResourceType, name: str, pre: Preconditions, obj: dict[str, Any]
) -> None:
    """A delete's preconditions against the object as it is (409 when they fail): kube's
    BeforeDelete names the kind; its namespace and CRD storages check them in their own
    words and name the resource."""
    if (rt.group, rt.kind) in _OWN_PRECONDITIONS:
        why = _namespace_precondition_failure(pre, obj)
        if why:
            raise errors.conflict(rt.plural, rt.group, name, why)
        return
    why = _precondition_failure(pre, obj)
    if why:
        raise errors.conflict(rt.kind, rt.group, name, why)
