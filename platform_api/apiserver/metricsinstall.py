"""Connect the metric families to one assembled server (called once from ``build``).

What the families cannot reach at import: the in-flight limiter's counts, the storage
to count and time, the watch hub to follow, the filter chain's authenticator and
authorizer to wrap, and the build information.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client.registry import Collector

from platform_api.apiserver import requestmetrics
from platform_api.apiserver.authmetrics import InstrumentedAuthenticator, InstrumentedAuthorizer
from platform_api.apiserver.discovery import version_info
from platform_api.apiserver.metrics import REGISTRY, record_build_info
from platform_api.apiserver.site import Filters
from platform_api.apiserver.storagemetrics import StorageCollector, instrument
from platform_api.apiserver.watchcachemetrics import (
    EtcdCacheCollector,
    EventCounter,
    InitializationCollector,
    RevisionCollector,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

_collectors: list[Collector] = []


def install(
    filters: Filters,
    storage: Storage,
    stores: Iterable[Store],
    size: Callable[[], tuple[str, int] | None],
    hub: WatchHub,
    watch_cache: Any = None,
) -> None:
    for old in _collectors:  # a second server in this process (tests): count the newest
        REGISTRY.unregister(old)
    _collectors[:] = [
        StorageCollector(storage, stores, size),
        RevisionCollector(lambda: hub.revision, stores),  # a live view: CRDs come and go
    ]
    if watch_cache is not None:
        _collectors.append(EtcdCacheCollector(watch_cache, stores))
    # LMDB's watch hub starts from the database once; etcd's cache re-lists after a gap.
    loads = (lambda: watch_cache.loads) if watch_cache is not None else (lambda: 1)
    _collectors.append(InitializationCollector(loads, stores))
    for collector in _collectors:
        REGISTRY.register(collector)
    record_build_info(version_info())
    requestmetrics.watch_inflight(filters.inflight.current)
    if not requestmetrics.ENABLED:
        return
    filters.authenticator = InstrumentedAuthenticator(filters.authenticator)
    filters.authorizer = InstrumentedAuthorizer(filters.authorizer)
    requestmetrics.count_dropped(filters.inflight)
    instrument(storage)
    hub.subscribe(EventCounter())
