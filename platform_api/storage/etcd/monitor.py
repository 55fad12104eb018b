"""etcd's database size, for ``apiserver_storage_size_bytes``.

kube asks one member's Status at every scrape (a second's timeout; a failure leaves the
sample out).  A scrape here is rendered on the reactor and cannot wait on the network,
so the size is read when the server starts and every ``INTERVAL`` after: a scrape sees
a size at most that old, and none while etcd does not answer.
"""

from __future__ import annotations

from typing import Any, Protocol

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.storage.etcd.kv import Status

log = Logger()
INTERVAL = 15.0  # seconds; Prometheus' own default scrape interval is 15 s too
# kube labels each etcd cluster it monitors by its place among them: with one, etcd-0.
CLUSTER_ID = "etcd-0"


class StatusSource(Protocol):
    async def status(self) -> Status: ...


class SizeMonitor:
    cluster_id = CLUSTER_ID

    def __init__(
        self, client: StatusSource, reactor: IReactorTime, interval: float = INTERVAL
    ) -> None:
        self._client = client
        self._interval = interval
        self._loop = LoopingCall(self._refresh)
        self._loop.clock = reactor
        self.size: int | None = None  # bytes, as etcd last told; None: no answer

    def start(self) -> None:
        self._loop.start(self._interval, now=True)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def _refresh(self) -> Deferred[None]:
        d: Deferred[Any] = ensureDeferred(self._client.status())
        d.addCallbacks(self._answered, self._failed)
        return d

    def _answered(self, status: Status) -> None:
        self.size = status.db_size

    def _failed(self, failure: Any) -> None:
        # A lost answer is no size (kube's failed Monitor leaves the sample out); the loop
        # goes on, so the size comes back with etcd.
        if self.size is not None:
            log.info("etcd's database size is unknown: {error}", error=failure.getErrorMessage())
        self.size = None
