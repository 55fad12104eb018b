"""``--event-ttl``: Events go away that long after their last write, as kube's do.

kube gives every Event write an etcd lease of the TTL (default one hour), so an Event
that stops being updated is gone an hour later and one a controller keeps counting lives
on.  The storage interface has no TTL, so the server that leads keeps a timer per Event
from the writes it sees and deletes the Event when it fires, if its resourceVersion is
still the one the timer was set for (a later write set a later timer).  Events already
stored when it starts count from their newest timestamp.  Both Event APIs are one
resource, so ``events.platform.io`` Events expire too.  A TTL of 0 keeps Events.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.timed import TimedController
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions, Preconditions
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)
DEFAULT_TTL = 3600.0


def last_written(event: Obj) -> float | None:
    """The newest time an Event names (its series, last, first and event times, its
    creation): what stands for its last write when the write itself was not seen."""
    series = event.get("series") or {}
    times = (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    )
    parsed = [t for t in (parse_timestamp(text or "") for text in times) if t is not None]
    return max(parsed) if parsed else None


class EventTTL(TimedController):
    """Keys are (namespace, name) of Events."""

    name = "event-ttl"
    manager = APISERVER

    def __init__(self, events: Store, ttl: float, *args: Any) -> None:
        super().__init__(*args)
        self.events = events
        self.ttl = ttl
        self.prefix = events.prefix
        # the resourceVersion each timer is for, and when it runs out
        self.versions: dict[Key, tuple[str, float]] = {}

    def _key(self, obj: Obj) -> Key:
        meta = obj["metadata"]
        return meta.get("namespace", ""), meta["name"]

    def _expire_after(self, obj: Obj, written: float) -> None:
        key = self._key(obj)
        due = written + self.ttl
        self.versions[key] = (obj["metadata"].get("resourceVersion", ""), due)
        self.cancel_timer(key)  # a later write: the TTL counts from it
        self.enqueue_after(key, max(0.0, due - self.now()))

    def resync(self) -> None:
        if self.ttl <= 0:
            return
        now = self.now()
        for stored in self.events.list("", ListOptions()).items:
            self._expire_after(stored.object, min(now, last_written(stored.object) or now))

    def observe(self, event: Event) -> None:
        if self.ttl <= 0 or not event.key.startswith(self.prefix):
            return
        if event.type == DELETED or event.stored is None:
            state = event.stored or event.prev
            if state is not None:
                key = self._key(state.object)
                self.versions.pop(key, None)
                self.cancel_timer(key)
            return
        self._expire_after(event.stored.object, self.now())

    async def sync(self, key: Key) -> float | None:
        found = self.versions.get(key)
        if found is None or found[1] > self.now():
            return None  # deleted, or written again since the timer fired: a later one runs
        version = self.versions.pop(key)[0]
        namespace, name = key
        try:
            await self.events.delete(
                namespace, name, preconditions=Preconditions(resource_version=version)
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):  # gone, or written again (its own timer is set)
                raise
        return None
