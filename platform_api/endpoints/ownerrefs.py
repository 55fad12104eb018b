"""kube's owner-reference dedup (handlers/rest.go): an object's ownerReferences that are
wholly equal to an earlier one go, and the writer is warned.  A create and a PUT are
deduplicated before ownership is recorded and again after mutating admission; a patch
only after admission."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
_ADVICE = (
    "API server dedups owner references in 1.20+, and may reject such requests as early "
    "as 1.24; please fix your requests; duplicate UID(s) observed: "
)
BEFORE = ".metadata.ownerReferences contains duplicate entries; " + _ADVICE
AFTER_ADMISSION = (
    ".metadata.ownerReferences contains duplicate entries after mutating admission "
    "happens; " + _ADVICE
)


def dedup_owner_references(obj: Obj, warn: Callable[[str], None], warning: str) -> None:
    """Drop the entries equal to an earlier one (same UID, every field alike), naming
    their UIDs in ``warning``'s words."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list) or len(refs) < 2:
        return
    kept: list[Any] = []
    duplicates: list[str] = []
    for ref in refs:
        if ref in kept:
            duplicates.append(str(ref.get("uid", "")) if isinstance(ref, dict) else "")
        else:
            kept.append(ref)
    if duplicates:
        warn(warning + ", ".join(duplicates))
        meta["ownerReferences"] = kept
