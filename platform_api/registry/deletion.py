"""Which finalizers a delete adds: kube's propagation policies (registry.Store deletion).

An explicit ``orphanDependents``/``propagationPolicy`` decides; otherwise finalizers
already on the object do; otherwise the kind's default (Background for every kind
served here).  Orphan adds ``orphan`` and Foreground ``foregroundDeletion``; the
garbage collector does the rest and removes them.
"""

from __future__ import annotations

from typing import Any

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
