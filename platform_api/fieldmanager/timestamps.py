"""kube's ``IgnoreManagedFieldsTimestampsTransformer``: a write that changes nothing but
the times of its managedFields entries keeps the old times, so it writes nothing and the
resourceVersion stays (a no-op scale, say, that rebuilt an entry without its time)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def keep_old_times(new: Obj, old: Obj) -> None:
    """Give ``new`` ``old``'s managedFields times when the entries are pairwise the same
    but for their times and the objects (both as stored) are otherwise equal.  Cheap
    checks first, as kube orders them."""
    before = (old.get("metadata") or {}).get("managedFields") or []
    after = (new.get("metadata") or {}).get("managedFields") or []
    if not after or len(before) != len(after):
        return  # an entry came or went: the writer shows as a manager
    if all(a.get("time") == b.get("time") for a, b in zip(after, before, strict=True)):
        return
    if any(_timeless(a) != _timeless(b) for a, b in zip(after, before, strict=True)):
        return
    if without_entries(new) != without_entries(old):
        return
    for entry, was in zip(after, before, strict=True):
        if "time" in was:
            entry["time"] = was["time"]
        else:
            entry.pop("time", None)


def _timeless(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    return {k: v for k, v in entry.items() if k != "time"}


def without_entries(obj: Obj) -> Obj:
    """``obj`` but for its managedFields."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}
