"""Both Event APIs over one storage: ``events.platform.io`` Events are core v1 Events.

kube stores one kind of Event: an Event written through ``events.k8s.io`` is listed by
``kubectl get events`` and shown by ``kubectl describe``, and one written through core v1
is read through ``events.k8s.io``.  The two differ in field names only (kube's
``pkg/apis/events`` conversion); ``managedFields`` go through as recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.codec.goshape import shape

Obj = dict[str, Any]
CORE_API_VERSION = "v1"
# events.platform.io name -> core v1 name, for the fields that are renamed.
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_BACK = {core: new for new, core in RENAMED.items()}
_SAME = ("eventTime", "series", "action", "reason", "type", "related", "reportingInstance")


def to_core(obj: Obj) -> Obj:
    """An ``events.platform.io`` Event as the core v1 Event stored for it; core v1's
    struct fields without omitempty come out as kube writes them (``source: {}``, null
    timestamps)."""
    out: Obj = {"apiVersion": CORE_API_VERSION, "kind": "Event", "metadata": obj.get("metadata")}
    out["involvedObject"] = obj.get("regarding") or {}
    for new, core in RENAMED.items():
        if new != "regarding" and obj.get(new) is not None:
            out[core] = obj[new]
    out.setdefault("source", {})
    out.setdefault("firstTimestamp", None)
    out.setdefault("lastTimestamp", None)
    out.update({k: obj[k] for k in _SAME if obj.get(k) is not None})
    return out


def from_core(api_version: str) -> Callable[[Obj], Obj | None]:
    """The stored core Event as ``api_version`` (events.platform.io/v1 or v1beta1)
    serves it, in the shape Go writes that struct: ``eventTime`` and the deprecated
    timestamps null when unset, ``deprecatedSource: {}``, zero counts left out."""

    def convert(obj: Obj) -> Obj | None:
        out: Obj = {"apiVersion": api_version, "kind": "Event", "metadata": obj.get("metadata")}
        out["eventTime"] = obj.get("eventTime")
        for core, new in _BACK.items():
            if obj.get(core) is not None:
                out[new] = obj[core]
        out["regarding"] = obj.get("involvedObject") or {}
        out.update({k: obj[k] for k in _SAME if obj.get(k) is not None})
        shape(out)
        return out

    return convert
