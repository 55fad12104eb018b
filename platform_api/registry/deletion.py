"""The deletion protocol's rules (kube's registry.Store deletion), used by store.py.

Which finalizers a delete adds follows kube's propagation policies: an explicit
``orphanDependents``/``propagationPolicy`` decides; otherwise finalizers already on the
object do; otherwise the kind's default (Background for every kind served here).
Orphan adds ``orphan`` and Foreground ``foregroundDeletion``; the garbage collector
does the rest and removes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from platform_api import errors
from platform_api.codec.goshape import shape
from platform_api.scheme.types import ResourceType
from platform_api.storage.interface import Preconditions

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


def _policy(finalizers: list[str], propagation: str | None, orphan: bool | None) -> str:
    if orphan is not None:
        return "Orphan" if orphan else "Background"
    if propagation is not None:
        return propagation
    if ORPHAN in finalizers:
        return "Orphan"
    if FOREGROUND in finalizers:
        return "Foreground"
    return "Background"


def deletion_finalizers(
    obj: dict[str, Any], propagation: str | None, orphan: bool | None = None
) -> list[str]:
    """The object's finalizers once this delete's propagation policy is applied."""
    current = list(obj.get("metadata", {}).get("finalizers") or [])
    policy = _policy(current, propagation, orphan)
    wanted = {"Orphan": ORPHAN, "Foreground": FOREGROUND}.get(policy)
    out = [f for f in current if f not in (ORPHAN, FOREGROUND) or f == wanted]
    if wanted and wanted not in out:
        out.append(wanted)
    return out


class _PrepareForDelete(Protocol):
    def prepare_for_delete(self, obj: dict[str, Any]) -> None: ...


def has_pending_finalizers(obj: dict[str, Any], kind: str) -> bool:
    """Whether something must finish before ``obj`` goes (namespaces: spec.finalizers)."""
    meta = obj.get("metadata", {})
    if meta.get("finalizers"):
        return True
    if kind == "Namespace":
        return bool(obj.get("spec", {}).get("finalizers"))
    return False


def finishes_deletion(obj: dict[str, Any]) -> bool:
    """The last finalizer of an object being deleted is gone: the update removes it.  A
    Namespace also waits for its ``spec.finalizers`` (kube's
    ShouldDeleteNamespaceDuringUpdate): another component may still be cleaning it up."""
    meta = obj.get("metadata", {})
    if obj.get("kind") == "Namespace" and (obj.get("spec") or {}).get("finalizers"):
        return False
    return (
        bool(meta.get("deletionTimestamp"))
        and not meta.get("finalizers")
        and meta.get("deletionGracePeriodSeconds", 0) == 0
    )


def mark_deleting(
    obj: dict[str, Any], finalizers: Sequence[str], now: str, kind: str, strategy: _PrepareForDelete
) -> dict[str, Any]:
    """The first phase of a deletion, in place: the finalizers set, and (once)
    ``deletionTimestamp`` stamped, the generation moved on (kube's markAsDeleting: the
    object's controllers now have a new state to act on) and the kind's own preparation
    run."""
    meta = obj["metadata"]
    if finalizers:
        meta["finalizers"] = list(finalizers)
    else:
        meta.pop("finalizers", None)
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
    """Why a Namespace's delete preconditions fail: kube's namespace storage checks them
    itself, in its own words (and names the resource, ``namespaces``)."""
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


def check_preconditions(
    rt: ResourceType, name: str, pre: Preconditions, obj: dict[str, Any]
) -> None:
    """A delete's preconditions against the object as it is (409 when they fail): kube's
    BeforeDelete names the kind; its namespace storage checks them in its own words and
    names the resource."""
    if rt.kind == "Namespace" and not rt.group:
        why = _namespace_precondition_failure(pre, obj)
        if why:
            raise errors.conflict(rt.plural, "", name, why)
        return
    why = _precondition_failure(pre, obj)
    if why:
        raise errors.conflict(rt.kind, rt.group, name, why)
