"""Storage families of kube's etcd3 metrics, for either backend.

Object counts are read at scrape (``count`` walks keys only; kube polls every minute),
the database size is the backend's (LMDB's file, etcd's Status), and every storage call is timed
into ``etcd_request_duration_seconds`` by operation, group and resource, as kube's
etcd3 store records it, so the standard dashboards' storage panels have data.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from twisted.internet.defer import Deferred

from platform_api.apiserver.metrics import (
    LATENCY_BUCKETS,
    REGISTRY,
    ReactorCounter,
    ReactorHistogram,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage

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


def _labels(key: bytes) -> tuple[str, str]:
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
        result = call(key, *args, **kwargs)
        group, resource = _labels(key)

        def record(value: Any = None) -> Any:
            ETCD_DURATION.observe(time.perf_counter() - started, group, operation, resource)
            ETCD_REQUESTS.inc(group, operation, resource)
            return value

        if isinstance(result, Deferred):
            return result.addBoth(record)
        if hasattr(result, "__await__"):
            return _awaiting(result, record)
        return record(result)

    return timed


async def _awaiting(work: Any, record: Callable[..., Any]) -> Any:
    try:
        return await work
    finally:
        record()


def instrument(storage: Storage) -> None:
    """Time the storage's operations (instance attributes shadow the class methods)."""
    for method, operation in _OPERATIONS.items():
        if hasattr(storage, method):
            setattr(storage, method, _timed(operation, getattr(storage, method)))
