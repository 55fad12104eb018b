"""The default class of a kind (StorageClass, IngressClass), as kube's defaulting plugins
pick it: every class annotated as default counts, and the newest wins (ties: the name
first in order), so that a newly added default takes over without removing the old."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_api.codec.protobuf_values import parse_time
from platform_api.storage.interface import ListOptions, Storage, readable

Obj = dict[str, Any]


def _created(obj: Obj) -> int:
    try:
        return parse_time(str(obj["metadata"].get("creationTimestamp") or ""))[0]
    except ValueError:
        return 0


def newest_default(storage: Storage, prefix: bytes, annotations: Iterable[str]) -> Obj | None:
    """The newest stored class with one of ``annotations`` set to ``"true"``, or None."""
    keys = tuple(annotations)
    defaults = []
    for stored in readable(storage.get_list(prefix, ListOptions()).items):
        obj = stored.object
        marks = (obj.get("metadata") or {}).get("annotations") or {}
        if any(marks.get(key) == "true" for key in keys):
            defaults.append(obj)
    if not defaults:
        return None
    defaults.sort(key=lambda o: (-_created(o), str(o["metadata"].get("name", ""))))
    return defaults[0]
