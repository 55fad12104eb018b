"""The conditions kube's namespace deleter keeps on a terminating Namespace's status.

Five, always in this order, each ``False`` with kube's "all is well" reason and message
until something is wrong: ``NamespaceContentRemaining`` then names the resources still
there (``pods. has 2 resource instances``: resource and group, core's empty), and
``NamespaceFinalizersRemaining`` the finalizers holding them.  Discovery, parsing and
deletion failures cannot happen in-process here; their conditions stay well.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
# (type, reason, message) of each condition when nothing is wrong, in kube's order.
_WELL = (
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (CONTENT_REMAINING, "ContentRemoved", "All content successfully removed"),
    (FINALIZERS_REMAINING, "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)


@dataclass
class Remaining:
    """What a deletion round left: objects per resource, and per finalizer."""

    resources: dict[str, int] = field(default_factory=dict)
    finalizers: dict[str, int] = field(default_factory=dict)

    def count(self, rt: ResourceType, objects: list[Obj]) -> None:
        if not objects:
            return
        self.resources[f"{rt.plural}.{rt.group}"] = len(objects)
        for obj in objects:
            for finalizer in obj.get("metadata", {}).get("finalizers") or []:
                self.finalizers[finalizer] = self.finalizers.get(finalizer, 0) + 1

    def problems(self) -> dict[str, tuple[str, str]]:
        """(reason, message) of each condition that is True now."""
        out = {}
        if self.resources:
            listed = sorted(f"{r} has {n} resource instances" for r, n in self.resources.items())
            out[CONTENT_REMAINING] = (
                "SomeResourcesRemain",
                "Some resources are remaining: " + ", ".join(listed),
            )
        if self.finalizers:
            listed = sorted(f"{f} in {n} resource instances" for f, n in self.finalizers.items())
            out[FINALIZERS_REMAINING] = (
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: " + ", ".join(listed),
            )
        return out


def with_conditions(namespace: Obj, remaining: Remaining, now: str) -> Obj | None:
    """``namespace`` with its deletion conditions brought up to date (kube's
    updateConditions: a condition's transition time moves only when its status does), or
    None when they already say so."""
    updated = copy.deepcopy(namespace)
    conditions = updated.setdefault("status", {}).setdefault("conditions", [])
    problems = remaining.problems()
    changed = False
    for kind, well_reason, well_message in _WELL:
        status = "True" if kind in problems else "False"
        reason, message = problems.get(kind, (well_reason, well_message))
        old = next((c for c in conditions if c.get("type") == kind), None)
        if old is None:
            conditions.append(
                {
                    "type": kind,
                    "status": status,
                    "lastTransitionTime": now,
                    "reason": reason,
                    "message": message,
                }
            )
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (
            status,
            reason,
            message,
        ):
            if old.get("status") != status:
                old["lastTransitionTime"] = now
            old.update(status=status, reason=reason, message=message)
            changed = True
    return updated if changed else None
