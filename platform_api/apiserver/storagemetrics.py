"""Storage families of kube's etcd3 metrics, for either backend.

Object counts are read at scrape (``count`` walks keys only; kube polls every minute),
the database size is the backend's (LMDB's file, etcd's Status), and every storage call is timed
into ``etcd_request_duration_seconds`` by operation, group and resource, as kube's
etcd3 store records it, so the standard dashboards' storage panels have data.  Lists
are counted as kube counts them: what etcd's watch cache serves in ``apiserver_cache_list_*``,
what the database serves (LMDB, or etcd read through) in ``apiserver_storage_list_*``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from platform_api.apiserver.metrics import (
    LATENCY_BUCKETS,
    REGISTRY,
    ReactorCounter,
    ReactorHistogram,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import (
    CONFLICT,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    TOO_LARGE_REVISION,
    UNREADABLE,
    ListOptions,
    ListResult,
    Storage,
    StorageError,
)

ETCD_DURATION = ReactorHistogram(
    "etcd_request_duration_seconds",
    "[ALPHA] Etcd request latency in seconds for each operation and object type.",
    ["group", "operation", "resource"],
    LATENCY_BUCKETS,
    REGISTRY,
)
ETCD_REQUESTS = ReactorCounter(
    "etcd_requests_total",
    "[ALPHA] Etcd request counts for each operation and object type.",
    ["group", "operation", "resource"],
    REGISTRY,
)
ETCD_ERRORS = ReactorCounter(
    "etcd_request_errors_total",
    "[ALPHA] Etcd failed request counts for each operation and object type.",
    ["group", "operation", "resource"],
    REGISTRY,
)
# What a call answers when the database did its work: kube's etcd3 store records the
# request before it turns an absent key or a lost compare into these, so they are no
# failed request (etcd's own errors, a compacted revision, a size limit, are).
_OUTCOMES = frozenset(
    {KEY_NOT_FOUND, KEY_EXISTS, CONFLICT, TOO_LARGE_REVISION, INVALID_OBJECT, UNREADABLE}
)
_OBJECTS_HELP = (
    "[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects "
    "instead] Number of stored objects at the time of last check split by kind. In case of a "
    "fetching error, the value will be -1."
)
_RESOURCE_HELP = (
    "[ALPHA] Number of stored objects at the time of last check split by kind. In case of a "
    "fetching error, the value will be -1."
)
_SIZE_HELP = "[STABLE] Size of the storage database file physically allocated in bytes."
# Which storage methods are timed, and kube's operation name for each.
_OPERATIONS = {"get": "get", "get_list": "list", "count": "count", "create": "create"}
_OPERATIONS |= {"guaranteed_update": "update", "delete": "delete"}
_OPERATIONS |= {"get_through": "get", "get_list_through": "list"}  # etcd's own reads


def _counter(name: str, doc: str, labels: list[str]) -> ReactorCounter:
    return ReactorCounter(name, f"[ALPHA] {doc}", labels, REGISTRY)


_GR, _GIR = ["group", "resource"], ["group", "index", "resource"]


@dataclass(frozen=True)
class ListCounters:
    """kube's counters of lists served one way: from storage, or from the watch cache
    (which has no evaluated count, and labels the index it scanned: none here)."""

    total: ReactorCounter
    fetched: ReactorCounter
    evaluated: ReactorCounter | None
    returned: ReactorCounter

    def record(self, prefix: bytes, tested: int | None, result: ListResult) -> ListResult:
        """``tested``: the selector's calls (None: no selector, every object returned)."""
        group, resource = key_labels(prefix)
        returned = len(result.items)
        fetched = returned if tested is None else tested
        scope = (group, resource) if self.evaluated is not None else (group, "", resource)
        self.total.inc(*scope)
        self.fetched.add(fetched, *scope)
        if self.evaluated is not None:
            self.evaluated.add(fetched, group, resource)
        self.returned.add(returned, group, resource)
        return result


STORAGE_LISTS = ListCounters(
    _counter("apiserver_storage_list_total", "Number of LIST requests served from storage", _GR),
    _counter(
        "apiserver_storage_list_fetched_objects_total",
        "Number of objects read from storage in the course of serving a LIST request",
        _GR,
    ),
    _counter(
        "apiserver_storage_list_evaluated_objects_total",
        "Number of objects tested in the course of serving a LIST request from storage",
        _GR,
    ),
    _counter(
        "apiserver_storage_list_returned_objects_total",
        "Number of objects returned for a LIST request from storage",
        _GR,
    ),
)
CACHE_LISTS = ListCounters(
    _counter("apiserver_cache_list_total", "Number of LIST requests served from watch cache", _GIR),
    _counter(
        "apiserver_cache_list_fetched_objects_total",
        "Number of objects read from watch cache in the course of serving a LIST request",
        _GIR,
    ),
    None,
    _counter(
        "apiserver_cache_list_returned_objects_total",
        "Number of objects returned for a LIST request from watch cache",
        _GR,
    ),
)


class StorageCollector(Collector):
    """Object counts per resource and the database size, read when scraped."""

    def __init__(
        self,
        storage: Storage,
        stores: Iterable[Store],
        size: Callable[[], tuple[str, int] | None] = lambda: None,
    ) -> None:
        self.count = storage.count  # bound before ``instrument``: scrapes are not timed
        by_prefix = {s.prefix: s.resource for s in stores}  # every version shares one prefix
        self.resources = sorted((rt.group, rt.plural, p) for p, rt in by_prefix.items())
        self.size = size  # the backend's (storage_cluster_id, bytes), None while unknown

    def collect(self) -> Iterator[GaugeMetricFamily]:
        legacy = GaugeMetricFamily("apiserver_storage_objects", _OBJECTS_HELP, labels=["resource"])
        objects = GaugeMetricFamily(
            "apiserver_resource_objects", _RESOURCE_HELP, labels=["group", "resource"]
        )
        for group, plural, prefix in self.resources:
            try:
                n = self.count(prefix)
            except Exception:
                n = -1
            legacy.add_metric([f"{plural}.{group}" if group else plural], n)
            objects.add_metric([group, plural], n)
        size = GaugeMetricFamily(
            "apiserver_storage_size_bytes", _SIZE_HELP, labels=["storage_cluster_id"]
        )
        known = self.size()
        if known is not None:
            size.add_metric([known[0]], known[1])
        yield from (legacy, objects, size)


def key_labels(key: bytes) -> tuple[str, str]:
    """(group, resource) of a storage key or prefix: ``/<group or core>/<plural>/...``."""
    parts = key.split(b"/", 3)
    if len(parts) < 3:
        return "", ""
    group = parts[1].decode()
    return ("" if group == "core" else group), parts[2].decode()


def _timed(operation: str, call: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call)
    def timed(key: bytes, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            result = call(key, *args, **kwargs)
        except Exception as e:
            _record(operation, key, started, e)
            raise
        if isinstance(result, Deferred):
            return result.addBoth(_recorded, operation, key, started)
        if hasattr(result, "__await__"):
            return _awaiting(result, operation, key, started)
        return _recorded(result, operation, key, started)

    return timed


def _record(operation: str, key: bytes, started: float, error: BaseException | None) -> None:
    group, resource = key_labels(key)
    ETCD_DURATION.observe(time.perf_counter() - started, group, operation, resource)
    ETCD_REQUESTS.inc(group, operation, resource)
    if error is not None and not (isinstance(error, StorageError) and error.code in _OUTCOMES):
        ETCD_ERRORS.inc(group, operation, resource)


def _recorded(value: Any, operation: str, key: bytes, started: float) -> Any:
    _record(operation, key, started, value.value if isinstance(value, Failure) else None)
    return value


async def _awaiting(work: Any, operation: str, key: bytes, started: float) -> Any:
    try:
        result = await work
    except Exception as e:
        _record(operation, key, started, e)
        raise
    _record(operation, key, started, None)
    return result


def _counted(counters: ListCounters, call: Callable[..., Any]) -> Callable[..., Any]:
    """``get_list`` counted: objects fetched and tested (the selector's calls; all of the
    page without one) and returned."""

    @functools.wraps(call)
    def listed(prefix: bytes, options: ListOptions) -> Any:
        tested: list[int] | None = None
        if options.predicate is not None:
            tested, predicate = [0], options.predicate

            def counting(obj: dict[str, Any]) -> bool:
                tested[0] += 1
                return predicate(obj)

            options = replace(options, predicate=counting)
        result = call(prefix, options)

        def count(listed: ListResult) -> ListResult:
            return counters.record(prefix, tested[0] if tested else None, listed)

        if isinstance(result, Deferred):
            return result.addCallback(count)
        return count(result)

    return listed


def instrument(storage: Storage) -> None:
    """Time the storage's operations (instance attributes shadow the class methods) and
    count its lists: etcd's ``get_list`` is its watch cache's, ``get_list_through`` etcd's."""
    cached = hasattr(storage, "get_list_through")
    lists = {"get_list": CACHE_LISTS if cached else STORAGE_LISTS}
    lists["get_list_through"] = STORAGE_LISTS
    for method, operation in _OPERATIONS.items():
        if not hasattr(storage, method):
            continue
        call = getattr(storage, method)
        if method in lists:
            call = _counted(lists[method], call)
        setattr(storage, method, _timed(operation, call))
