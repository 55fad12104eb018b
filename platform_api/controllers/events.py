"""core/v1 Events about objects, as client-go's recorder writes them: what ``kubectl
describe`` shows under Events ("Scaled up replica set web-5d4f8 from 0 to 3").

Recording is best effort, as kube's: a failed write is logged and forgotten, never a
controller's error.  client-go's EventCorrelator runs first (eventcorrelator.py): similar
events are combined and a source's events about one object rate-limited; then an event
identical to one recorded before raises that one's count and lastTimestamp instead of
making another.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from platform_api.controllers.eventcorrelator import CACHE_SIZE, Correlator, Key
from platform_api.errors import StatusError
from platform_api.timestamps import format_timestamp

log = Logger()
Obj = dict[str, Any]


class EventRecorder:
    def __init__(self, events: Any, component: str, clock: Any) -> None:
        self.events = events  # the core/v1 events store
        self.component = component
        self.clock = clock
        self._last = 0  # names stay distinct when the clock has not moved
        # client-go's EventCorrelator: an identical event again (same object, type,
        # reason, message) raises the count of the one recorded, as `x3 over 2m` shows
        self._seen: OrderedDict[Key, tuple[str, str, int]] = OrderedDict()
        self._correlator = Correlator(clock.seconds)

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
        event, key = self._correlator.aggregate(event)
        seen = self._seen.get(key)
        if not self._correlator.allowed(event):
            # dropped, but counted: the next write of it says how many there were
            if seen is not None:
                self._remember(key, seen[0], namespace, seen[2] + 1)
            return
        work = ensureDeferred(self._record(key, namespace, event))
        work.addErrback(lambda f: log.warn("recording an event: {e}", e=f.value))

    async def _record(self, key: Key, namespace: str, event: Obj) -> None:
        """Counted in the cache before the write, as client-go's correlator does, so a
        burst of the same event is one Event however the writes interleave."""
        seen = self._seen.get(key)
        if seen is None:
            name = event["metadata"]["name"]
            self._remember(key, name, namespace, 1)
            try:
                await self.events.create(namespace, event)
            except Exception:
                self._seen.pop(key, None)
                raise
            return
        name, _, count = seen
        self._remember(key, name, namespace, count + 1)
        stamp = event["lastTimestamp"]

        def again(existing: Obj | None) -> Obj:
            assert existing is not None
            existing.update(count=count + 1, lastTimestamp=stamp, message=event["message"])
            return existing

        try:
            await self.events.update(namespace, name, again)
        except StatusError as e:
            if e.code != 404:
                raise
            self._remember(key, event["metadata"]["name"], namespace, 1)  # gone: anew
            await self.events.create(namespace, event)

    def _remember(self, key: Key, name: str, namespace: str, count: int) -> None:
        self._seen[key] = (name, namespace, count)
        self._seen.move_to_end(key)
        while len(self._seen) > CACHE_SIZE:
            self._seen.popitem(last=False)
