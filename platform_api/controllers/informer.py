"""An in-memory copy of some resources, kept current from the watch hub.

kube's authorizers and controllers read shared informers, never storage, on the hot
path.  An ``Informer`` lists its prefixes once at start, then applies the hub's events
in revision order; listeners hear every change as ``(key, old, new)`` (``None`` for
absent), so indexes built on top stay in step with the copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from twisted.logger import Logger

from platform_api.storage.interface import DELETED, Event, ListOptions, Storage
from platform_api.storage.watch import WatchHub

log = Logger()
Obj = dict[str, Any]
Listener = Callable[[bytes, Obj | None, Obj | None], None]


class Informer:
    """Objects under one or more key prefixes, by key; read-only to callers."""

    prefix = b"/"

    def __init__(self, storage: Storage, hub: WatchHub, prefixes: tuple[bytes, ...]) -> None:
        self.storage = storage
        self.hub = hub
        self.prefixes = prefixes
        self.objects: dict[bytes, Obj] = {}
        self.listeners: list[Listener] = []
        self.revision = 0
        self.running = False

    def add_listener(self, listener: Listener) -> None:
        """Hear every later change, after hearing the current objects as additions."""
        self.listeners.append(listener)
        for key, obj in self.objects.items():
            listener(key, None, obj)

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

    def _apply(self, key: bytes, obj: Obj | None) -> None:
        old = self.objects.pop(key, None) if obj is None else self.objects.get(key)
        if obj is not None:
            self.objects[key] = obj
        for listener in self.listeners:
            try:
                listener(key, old, obj)
            except Exception:
                log.failure("informer listener")

    def under(self, prefix: bytes) -> Iterator[Obj]:
        """Objects whose key starts with ``prefix`` (a scan: for cold paths only)."""
        for key, obj in self.objects.items():
            if key.startswith(prefix):
                yield obj
