"""core/v1 Events about objects, as client-go's recorder writes them: what ``kubectl
describe`` shows under Events ("Scaled up replica set web-5d4f8 from 0 to 3").

Recording is best effort, as kube's: a failed write is logged and forgotten, never a
controller's error.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api.scheme.decoding import format_timestamp

log = Logger()
Obj = dict[str, Any]


class EventRecorder:
    def __init__(self, events: Any, component: str, clock: Any) -> None:
        self.events = events  # the core/v1 events store
        self.component = component
        self.clock = clock
        self._last = 0  # names stay distinct when the clock has not moved

    def record(
        self, obj: Obj, api_version: str, kind: str, type_: str, reason: str, message: str
    ) -> None:
        meta = obj["metadata"]
        now = self.clock.seconds()
        stamp = format_timestamp(now)
        self._last = nanos = max(int(now * 1e9), self._last + 1)
        namespace = meta.get("namespace") or "default"
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            # client-go's recorder names events <object>.<unix nanoseconds in hex>
            "metadata": {"name": f"{meta['name']}.{nanos:x}", "namespace": namespace},
            "involvedObject": {
                "apiVersion": api_version,
                "kind": kind,
                "name": meta["name"],
                "namespace": meta.get("namespace", ""),
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": "",
        }
        work = ensureDeferred(self.events.create(namespace, event))
        work.addErrback(lambda f: log.warn("recording an event: {e}", e=f.value))
