"""An in-memory copy of some resources, kept current from the watch hub.

kube's authorizers and controllers read shared informers, never storage, on the hot
path.  An ``Informer`` lists its prefixes once at start, then applies the hub's events
in revision order; listeners hear every change as ``(key, old, new)`` (``None`` for
absent), so indexes built on top stay in step with the copy.
"""

from __future__ import annotations

from typing import Any

from platform_api.client.cache import ObjectCache
from platform_api.storage.interface import DELETED, Event, ListOptions, Storage
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]


class Informer(ObjectCache):
    """Objects under one or more key prefixes, by key; read-only to callers."""

    prefix = b"/"

    def __init__(self, storage: Storage, hub: WatchHub, prefixes: tuple[bytes, ...]) -> None:
        self.storage = storage
        self.hub = hub
        self.prefixes = prefixes
        super().__init__()
        self.revision = 0
        self.running = False

    def start(self) -> None:
        """Subscribe, then list: events at or before the listed revision are dropped."""
        self.running = True
        self.hub.subscribe(self)
        revision = self.storage.current_revision()
        for prefix in self.prefixes:
            result = self.storage.get_list(prefix, ListOptions(revision=revision))
            for stored in result.items:
                self._apply(stored.key, stored.object)
        self.revision = revision

    def stop(self) -> None:
        self.running = False
        self.hub.unsubscribe(self)

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            if event.revision <= self.revision:
                continue
            if not event.key.startswith(self.prefixes):
                continue
            self.revision = event.revision
            if event.type == DELETED or event.stored is None:
                self._apply(event.key, None)
            else:
                self._apply(event.key, event.stored.object)
