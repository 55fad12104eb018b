"""Connect the metric families to one assembled server (called once from ``build``).

What the families cannot reach at import: the in-flight limiter's counts, the storage
to count and time, the filter chain's authenticator and authorizer to wrap, and the
build information.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from platform_api.apiserver import requestmetrics
from platform_api.apiserver.authmetrics import InstrumentedAuthenticator, InstrumentedAuthorizer
from platform_api.apiserver.discovery import version_info
from platform_api.apiserver.metrics import REGISTRY, record_build_info
from platform_api.apiserver.site import Filters
from platform_api.apiserver.storagemetrics import StorageCollector, instrument
from platform_api.registry.store import Store
from platform_api.storage.interface import Storage

_collector: StorageCollector | None = None


def install(
    filters: Filters,
    storage: Storage,
    stores: Iterable[Store],
    size: Callable[[], tuple[str, int] | None],
) -> None:
    global _collector
    if _collector is not None:  # a second server in this process (tests): count the newest
        REGISTRY.unregister(_collector)
    _collector = StorageCollector(storage, stores, size)
    REGISTRY.register(_collector)
    record_build_info(version_info())
    requestmetrics.watch_inflight(filters.inflight.current)
    if not requestmetrics.ENABLED:
        return
    filters.authenticator = InstrumentedAuthenticator(filters.authenticator)
    filters.authorizer = InstrumentedAuthorizer(filters.authorizer)
    requestmetrics.count_dropped(filters.inflight)
    instrument(storage)
