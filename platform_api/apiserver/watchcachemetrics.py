"""kube's watch cache families, of the watch hub (this server's watch cache on LMDB and
on etcd alike): the events it took in and sent on, and its revision.  (The watch
streams' own families, with the initial events and the watchers ended for reading too
slowly, are endpoints/watchmetrics.py's.)

kube counts received and dispatched events apart (its cache takes events in on one
goroutine and dispatches them on another); the hub does both in one step, so the two
count the same events: those a watcher may see (a value that does not decode is
neither).  Its revision is one for every resource; kube's cache keeps one per
resource, which etcd's progress notifications keep at the global one.  On etcd, the
sizes of the watch cache's per-resource histories are kube's capacity families (named,
as kube's, without ``apiserver_``), beside the events and progress notifications the
etcd watch brought.  A read that waits for the cache to reach a revision
is timed, and a consistent list served from etcd's watch cache counted, as kube's are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram
from platform_api.apiserver.storagemetrics import key_labels
from platform_api.registry.store import Store
from platform_api.storage.interface import Event

_LABELS = ["group", "resource"]
EVENTS_RECEIVED = ReactorCounter(
    "apiserver_watch_cache_events_received_total",
    "[ALPHA] Counter of events received in watch cache broken by resource type.",
    _LABELS,
    REGISTRY,
)
EVENTS_DISPATCHED = ReactorCounter(
    "apiserver_watch_cache_events_dispatched_total",
    "[ALPHA] Counter of events dispatched in watch cache broken by resource type.",
    _LABELS,
    REGISTRY,
    same_as=EVENTS_RECEIVED,  # the hub takes an event in and sends it on in one step
)
READ_WAIT = ReactorHistogram(
    "apiserver_watch_cache_read_wait_seconds",
    "[ALPHA] Histogram of time spent waiting for a watch cache to become fresh.",
    _LABELS,
    [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3],
    REGISTRY,
)
CONSISTENT_READS = ReactorCounter(
    "apiserver_watch_cache_consistent_read_total",
    "[ALPHA] Counter for consistent reads from cache.",
    [*_LABELS, "success", "fallback"],
    REGISTRY,
)
_VERSION_HELP = (
    "[ALPHA] Current resource version of watch cache broken by resource type. This is "
    "truncated to the 15 least significant digits."
)


class EventCounter:
    """A hub subscriber to every key: counts each event by its resource."""

    prefix = b""

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            EVENTS_RECEIVED.inc(*key_labels(event.key))  # and so EVENTS_DISPATCHED


def read_waited(prefix: bytes, seconds: float) -> None:
    """A read of the resource under ``prefix`` waited for the cache to reach a revision."""
    READ_WAIT.observe(seconds, *key_labels(prefix))


def consistent_list(prefix: bytes, success: bool, fallback: bool) -> None:
    """A consistent list went to the watch cache: answered or not, and whether from etcd
    after the cache did not catch up in time."""
    CONSISTENT_READS.inc(*key_labels(prefix), str(success).lower(), str(fallback).lower())


class RevisionCollector(Collector):
    """The hub's revision for every served resource, read when scraped."""

    def __init__(self, revision: Callable[[], int], stores: Iterable[Store]) -> None:
        self.revision = revision
        self.stores = stores

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "apiserver_watch_cache_resource_version", _VERSION_HELP, labels=_LABELS
        )
        revision = self.revision() % 10**15
        for group, resource in sorted({(s.resource.group, s.resource.plural) for s in self.stores}):
            family.add_metric([group, resource], revision)
        yield family


class InitializationCollector(Collector):
    """How often each served resource's cache was filled from a list (``loads``): once at
    start, and on etcd again after every re-list (a watch that fell behind a compaction).
    kube's cacher counts its own resource's; this server's cache lists every resource at
    once, so each resource counts every fill (one that came later, a CRD's, too)."""

    def __init__(self, loads: Callable[[], int], stores: Iterable[Store]) -> None:
        self.loads = loads
        self.stores = stores

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "apiserver_watch_cache_initializations",
            "[ALPHA] Counter of watch cache initializations broken by resource type.",
            labels=_LABELS,
        )
        loads = self.loads()
        for group, resource in sorted({(s.resource.group, s.resource.plural) for s in self.stores}):
            family.add_metric([group, resource], loads)
        yield family


class EtcdWatchCache(Protocol):
    """The etcd watch cache, as far as its counts go (storage/etcd/cache.py)."""

    resizes: dict[bytes, list[int]]
    received: dict[bytes, int]
    bookmarks: int
    loads: int

    def capacity(self, resource: bytes) -> int: ...


class EtcdCacheCollector(Collector):
    """The families of kube's etcd watch cache and of the etcd watches that feed it, for
    each served resource: its history size (as kube's, 100 before its first event), how
    often that grew and shrank, the events etcd's watch brought, and the progress
    notifications (bookmarks).  This server watches every resource on one etcd watch, so
    each of its notifications counts for every resource, as one on each of kube's
    per-resource watches would."""

    def __init__(self, cache: EtcdWatchCache, stores: Iterable[Store]) -> None:
        self.cache = cache
        self.stores = stores

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        capacity = GaugeMetricFamily(
            "watch_cache_capacity",
            "[ALPHA] Total capacity of watch cache broken by resource type.",
            labels=_LABELS,
        )
        changes = [
            CounterMetricFamily(
                f"watch_cache_capacity_{way}",
                f"[ALPHA] Total number of watch cache capacity {way} events broken by "
                "resource type.",
                labels=_LABELS,
            )
            for way in ("increase", "decrease")
        ]
        received = CounterMetricFamily(
            "apiserver_storage_events_received",
            "[BETA] Number of etcd events received split by kind.",
            labels=_LABELS,
        )
        bookmarks = CounterMetricFamily(
            "etcd_bookmark",
            "[ALPHA] Number of etcd bookmarks (progress notify events) split by kind.",
            labels=_LABELS,
        )
        cache = self.cache
        prefixes = {(s.resource.group, s.resource.plural): s.prefix for s in self.stores}
        for key, prefix in sorted(prefixes.items()):
            labels = list(key)
            capacity.add_metric(labels, cache.capacity(prefix))
            for family, count in zip(changes, cache.resizes.get(prefix, ()), strict=False):
                if count:
                    family.add_metric(labels, count)
            if cache.received.get(prefix):
                received.add_metric(labels, cache.received[prefix])
            if cache.bookmarks:
                bookmarks.add_metric(labels, cache.bookmarks)
        yield capacity
        yield from changes
        yield from (received, bookmarks)
