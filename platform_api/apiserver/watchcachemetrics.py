"""kube's watch cache families, of the watch hub (this server's watch cache on LMDB and
on etcd alike): the events it took in and sent on, and its revision.  (The watch
streams' own families, with the initial events and the watchers ended for reading too
slowly, are endpoints/watchmetrics.py's.)

kube counts received and dispatched events apart (its cache takes events in on one
goroutine and dispatches them on another); the hub does both in one step, so the two
count the same events: those a watcher may see (a value that does not decode is
neither).  Its revision is one for every resource; kube's cache keeps one per
resource, which etcd's progress notifications keep at the global one.  On etcd, the
sizes of the watch cache's per-resource histories are kube's capacity families.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter
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


class SizedHistories(Protocol):
    """The etcd watch cache, as far as its histories' sizes go (storage/etcd/cache.py)."""

    resizes: dict[bytes, list[int]]

    def capacity(self, resource: bytes) -> int: ...


class CapacityCollector(Collector):
    """kube's history sizes of the etcd watch cache: each served resource's capacity
    (as kube's, 100 before the resource's first event), and how often each grew and
    shrank (a series once it has)."""

    def __init__(self, cache: SizedHistories, stores: Iterable[Store]) -> None:
        self.cache = cache
        self.stores = stores

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        capacity = GaugeMetricFamily(
            "apiserver_watch_cache_capacity",
            "[ALPHA] Total capacity of watch cache broken by resource type.",
            labels=_LABELS,
        )
        changes = [
            CounterMetricFamily(
                f"apiserver_watch_cache_capacity_{way}",
                f"[ALPHA] Total number of watch cache capacity {way} events broken by "
                "resource type.",
                labels=_LABELS,
            )
            for way in ("increase", "decrease")
        ]
        prefixes = {(s.resource.group, s.resource.plural): s.prefix for s in self.stores}
        for labels, prefix in sorted(prefixes.items()):
            capacity.add_metric(list(labels), self.cache.capacity(prefix))
            for family, count in zip(changes, self.cache.resizes.get(prefix, ()), strict=False):
                if count:
                    family.add_metric(list(labels), count)
        yield capacity
        yield from changes
