"""``--audit-webhook-config-file``: events POSTed as ``EventList`` batches (kube's buffered
webhook backend).

Events wait in a buffer of ``--audit-webhook-batch-buffer-size``; a batch leaves when
it holds ``--audit-webhook-batch-max-size`` events or ``--audit-webhook-batch-max-wait``
has passed, at most ``throttle-qps`` batches a second (bursts of ``throttle-burst``).  A
failed POST is retried with back-off (initial ``--audit-webhook-initial-backoff``,
x1.5, 5 tries).  With ``--audit-webhook-truncate-enabled`` a batch is also split so its
events' JSON stays within ``--audit-webhook-truncate-max-batch-size`` bytes.  A slow or
dead sink never holds a request: when the buffer is full the event is dropped and
counted in ``apiserver_audit_error_total{plugin="buffered"}``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from twisted.internet.defer import ensureDeferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.apiserver.audit.event import API_VERSION
from platform_api.apiserver.auditmetrics import AUDIT_ERRORS
from platform_api.client.kubeconfig import Connection
from platform_api.timers import timer_clock

log = Logger()
MODES = ("batch", "blocking", "blocking-strict")
RETRY_FACTOR = 1.5
RETRY_STEPS = 5
SEND_TIMEOUT = 30.0


@dataclass
class BatchConfig:
    """kube's ``--audit-webhook-batch-*`` flags and their defaults."""

    buffer_size: int = 10000
    max_batch_size: int = 400
    max_batch_wait: float = 30.0
    throttle_enable: bool = True
    throttle_qps: float = 10.0
    throttle_burst: int = 15
    initial_backoff: float = 10.0
    max_batch_bytes: int = 0  # 0: no bound (--audit-webhook-truncate-max-batch-size)


class Throttle:
    """A token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter)."""

    def __init__(self, qps: float, burst: int, clock: IReactorTime) -> None:
        self.qps, self.burst, self.clock = qps, burst, clock
        self.tokens = float(burst)
        self.last = timer_clock(clock)()

    def delay(self) -> float:
        """Take one token; the seconds to wait before using it."""
        now = timer_clock(self.clock)()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / self.qps


class WebhookBackend:
    plugin = "webhook"

    def __init__(
        self,
        connection: Connection,
        reactor: Any,
        config: BatchConfig | None = None,
        *,
        client: Any = None,
        jitter: Callable[[], float] = random.random,
        api_version: str = API_VERSION,
    ) -> None:
        self.connection = connection
        self.reactor = reactor
        self.api_version = api_version
        self.config = config or BatchConfig()
        self.client = client
        self.jitter = jitter
        self.buffer: list[dict[str, Any]] = []
        self.timer: Any = None
        self.throttle = (
            Throttle(self.config.throttle_qps, self.config.throttle_burst, reactor)
            if self.config.throttle_enable
            else None
        )
        self.sent_batches = 0
        self.stopped = False

    def process(self, event: dict[str, Any]) -> None:
        if self.stopped:
            return
        if len(self.buffer) >= self.config.buffer_size:
            AUDIT_ERRORS.labels(plugin="buffered").inc()
            log.error("Error in audit plugin 'buffered': audit buffer queue blocked")
            return
        self.buffer.append(event)
        if len(self.buffer) >= self.config.max_batch_size:
            self.flush()
        elif self.timer is None:
            self.timer = self.reactor.callLater(self.config.max_batch_wait, self.flush)

    def flush(self) -> None:
        """Send everything buffered, in batches of at most max_batch_size."""
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None
        while self.buffer:
            batch = self.buffer[: self.config.max_batch_size]
            del self.buffer[: self.config.max_batch_size]
            for items in self._by_bytes([orjson.dumps(event) for event in batch]):
                ensureDeferred(self._send(items)).addErrback(self._failed)

    def _by_bytes(self, items: list[bytes]) -> list[list[bytes]]:
        """``items`` in runs whose sizes (as the truncating backend counts them) stay
        within ``max_batch_bytes``; one item is never split."""
        limit = self.config.max_batch_bytes
        if not limit:
            return [items]
        runs: list[list[bytes]] = [[]]
        size = 0
        for item in items:
            if runs[-1] and size + len(item) + 1 > limit:
                runs.append([])
                size = 0
            runs[-1].append(item)
            size += len(item) + 1
        return runs

    async def _send(self, items: list[bytes]) -> None:
        if self.throttle is not None:
            wait = self.throttle.delay()
            if wait > 0:
                await deferLater(self.reactor, wait, lambda: None)
        head = b'{"kind":"EventList","apiVersion":"%s","metadata":{},"items":[' % (
            self.api_version.encode()
        )
        body = head + b",".join(items) + b"]}"
        backoff = self.config.initial_backoff
        error = ""
        for attempt in range(RETRY_STEPS):
            error = await self._post(body)
            if not error:
                self.sent_batches += 1
                return
            if attempt + 1 < RETRY_STEPS and not self.stopped:
                pause = backoff * (1 + 0.2 * self.jitter())
                await deferLater(self.reactor, pause, lambda: None)
                backoff *= RETRY_FACTOR
            elif self.stopped:
                break
        AUDIT_ERRORS.labels(plugin=self.plugin).inc(len(items))
        log.error(
            "Error in audit plugin 'webhook' affecting {n} audit events: {e}", n=len(items), e=error
        )

    def _failed(self, failure: Failure) -> None:
        log.failure("Error in audit plugin 'webhook'", failure)

    async def _post(self, body: bytes) -> str:
        """One POST; an error text, or "" when the sink took the batch."""
        if self.client is None:
            self.client = self.connection.client(self.reactor)
        try:
            reply = await self.client.post(
                self.connection.server,
                data=body,
                headers=self.connection.request_headers(),
                timeout=SEND_TIMEOUT,
            )
            await reply.content()
        except Exception as e:  # the sink is down or unreachable: retried
            return str(e) or type(e).__name__
        if 200 <= reply.code < 300:
            return ""
        return f"the server responded with status {reply.code}"

    def shutdown(self) -> None:
        """Send what is buffered (best effort: the server does not wait for the sink)."""
        self.flush()
        self.stopped = True
