"""kube's watch cache families, of the watch hub (this server's watch cache on LMDB and
on etcd alike): the events it took in and sent on, and its revision.  (The watch
streams' own families, with the initial events and the watchers ended for reading too
slowly, are endpoints/watchmetrics.py's.)

kube counts received and dispatched events apart (its cache takes events in on one
goroutine and dispatches them on another); the hub does both in one step, so the two
count the same events: those a watcher may see (a value that does not decode is
neither).  Its revision is one for every resource; kube's cache keeps one per
resource, which etcd's progress notifications keep at the global one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import GaugeMetricFamily
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
