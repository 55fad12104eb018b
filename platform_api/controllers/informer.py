"""An in-memory copy of some resources, kept current from the watch hub.

kube's authorizers and controllers read shared informers, never storage, on the hot
path.  An ``Informer`` lists its prefixes once at start, then applies the hub's events
in revision order; listeners hear every change as ``(key, old, new)`` (``None`` for
absent), so indexes built on top stay in step with the copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from platform_api.client.cache import ObjectCache
from platform_api.registry.store import Store
from platform_api.storage.interface import (
    DELETED,
    Event,
    ListOptions,
    ListResult,
    Storage,
    readable,
)
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
Owner = tuple[str, str | None]


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
        self.hub.subscribe(self, under=self.prefixes)
        revision = self.storage.current_revision()
        for prefix in self.prefixes:
            result = self.storage.get_list(prefix, ListOptions(revision=revision))
            for stored in readable(result.items):
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


_shared: dict[tuple[int, bytes], ListResult] | None = None


@contextmanager
def shared_lists() -> Iterator[None]:
    """Controllers started together decode each resource once, as kube's shared informer
    factory lists it once: inside, indexes loading one resource share one list (and its
    objects; a dozen private copies of every pod made a large cluster's memory)."""
    global _shared
    outer, _shared = _shared, {}
    try:
        yield
    finally:
        _shared = outer


def _list_all(store: Store) -> ListResult:
    if _shared is None:
        return store.list("", ListOptions())
    key = (id(store.storage), store.prefix)
    found = _shared.get(key)
    if found is None:
        # A list from before another process's commit is as good as one taken then:
        # the index applies the events after its revision.
        found = _shared[key] = store.list("", ListOptions())
    return found


class ByNamespace:
    """Objects of one kind by namespace and name, kept from the hub's events: the
    controllers' informer (a list from storage per event decodes every object again).
    With ``owners``, also by the uid of the controller that owns each (kube's claim
    step scans the namespace; a DaemonSet beside thousands of pods paid for each)."""

    def __init__(self, store: Store, owners: bool = False) -> None:
        self.store = store
        self.objects: dict[str, dict[str, Obj]] = {}
        self.revision = 0
        # (namespace, controller uid, None for none) -> name -> object
        self._owned: dict[Owner, dict[str, Obj]] | None = {} if owners else None

    def load(self) -> list[Obj]:
        listed = _list_all(self.store)
        self.objects.clear()
        if self._owned is not None:
            self._owned.clear()
        for stored in listed.items:
            self._put(stored.object)
        self.revision = listed.revision
        return [s.object for s in listed.items]

    def apply(self, event: Event) -> tuple[Obj | None, Obj | None]:
        """(old, new) of the object the event changes; (None, None) for one the list
        already had (an event older than the list)."""
        if event.revision <= self.revision:
            return None, None
        namespace = self.store.namespace_of_key(event.key)
        name = self.store.name_of_key(event.key)
        old = self.objects.get(namespace, {}).get(name)
        new = event.stored.object if event.type != DELETED and event.stored is not None else None
        if old is not None and self._owned is not None:
            owner = _owner_key(old)
            siblings = self._owned.get(owner, {})
            siblings.pop(name, None)
            if not siblings:
                self._owned.pop(owner, None)
        if new is None:
            self.objects.get(namespace, {}).pop(name, None)
        else:
            self._put(new)
        return old, new

    def _put(self, obj: Obj) -> None:
        meta = obj["metadata"]
        self.objects.setdefault(meta.get("namespace", ""), {})[meta["name"]] = obj
        if self._owned is not None:
            self._owned.setdefault(_owner_key(obj), {})[meta["name"]] = obj

    def candidates(self, namespace: str, uid: str) -> list[Obj]:
        """What a controller ``uid`` may claim in ``namespace``: the objects it controls,
        then those no controller owns (built with ``owners``)."""
        assert self._owned is not None, "an index built without owners"
        mine = self._owned.get((namespace, uid), {})
        orphans = self._owned.get((namespace, None), {})
        return [*mine.values(), *orphans.values()]

    def in_namespace(self, namespace: str) -> list[Obj]:
        return list(self.objects.get(namespace, {}).values())


def controller_of(obj: Obj) -> Obj | None:
    """The owner reference marked ``controller``, if any (kube's GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def _owner_key(obj: Obj) -> Owner:
    ref = controller_of(obj)
    namespace = obj["metadata"].get("namespace", "")
    return namespace, None if ref is None else str(ref.get("uid", ""))
