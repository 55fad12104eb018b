"""Finished spans batched on the reactor and sent to the collector from a thread.

The SDK's BatchSpanProcessor encodes and sends on a thread of its own: that thread holds
the GIL for the encoding while the reactor waits for it after every system call, and
with every request traced a server answered GETs at 0.3x its untraced rate
(benchmarks/tracingbench.py).  Here spans wait in a list, are encoded on the reactor
(between requests, as every other response is; straight to bytes, spanwire.py) every
``delay`` seconds or once
``batch`` have ended, and only the blocking gRPC call, which releases the GIL, runs on a
pool thread; one call at a time, as the SDK's.  Past ``most`` waiting spans new ones are
dropped (and counted), as the SDK drops them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import grpc
from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from platform_api.apiserver.spanwire import encode_spans

log = Logger()
# Seconds between exports: the SDK's (and Go's) schedule delay, and its variable.
DELAY = float(os.environ.get("OTEL_BSP_SCHEDULE_DELAY", "5000")) / 1000
BATCH = 512  # spans per export: the SDK's max export batch size
MOST = 2048  # spans waiting at most: the SDK's max queue size
TIMEOUT = 10.0  # seconds an export may take: the SDK's export timeout
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
Send = Callable[[bytes], None]  # a blocking export of one serialized request


def grpc_target(endpoint: str) -> str:
    """gRPC's target for the configured endpoint: ``dns://host:port`` (kube's form of a
    bare address) is gRPC's ``dns:///host:port``."""
    if endpoint.startswith("dns://") and "/" not in endpoint[len("dns://") :]:
        return "dns:///" + endpoint[len("dns://") :]
    return endpoint


def otlp_sender(endpoint: str) -> tuple[Send, Callable[[], None]]:
    """A blocking OTLP/gRPC export to ``endpoint`` (no TLS, as kube's), and its closer."""
    channel = grpc.insecure_channel(grpc_target(endpoint))
    # The request is serialized already (spanwire.py): gRPC sends its bytes as they are.
    export = channel.unary_unary(
        EXPORT,
        request_serializer=bytes,
        response_deserializer=ExportTraceServiceResponse.FromString,
    )

    def send(request: bytes) -> None:
        export(request, timeout=TIMEOUT)

    return send, channel.close


class ReactorSpanProcessor(SpanProcessor):
    def __init__(
        self,
        reactor: Any,
        send: Send,
        *,
        delay: float = DELAY,
        batch: int = BATCH,
        most: int = MOST,
        run_blocking: Callable[[Callable[[], None]], Deferred[None]] | None = None,
    ) -> None:
        self.reactor = reactor
        self.send = send
        self.delay, self.batch, self.most = delay, batch, most
        self.dropped = 0
        self._pending: list[ReadableSpan] = []
        self._timer: Any = None
        self._sending: Deferred[None] | None = None
        self._run = run_blocking or (
            lambda work: deferToThreadPool(reactor, reactor.getThreadPool(), work)
        )

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None or not span.context.trace_flags.sampled:
            return
        if len(self._pending) >= self.most:
            self.dropped += 1
            return
        self._pending.append(span)
        if len(self._pending) >= self.batch and self._sending is None:
            self._export()
        elif self._timer is None:
            self._timer = self.reactor.callLater(self.delay, self._export)

    def _stop_timer(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _export(self) -> None:
        self._stop_timer()
        if self._sending is not None or not self._pending:
            return
        self._send()

    def _send(self) -> Deferred[None]:
        """The next batch on its way; ``_sending`` until it is gone."""
        spans, self._pending = self._pending[: self.batch], self._pending[self.batch :]
        request = encode_spans(spans)
        sent = self._sending = self._run(lambda: self.send(request))
        sent.addErrback(self._failed, len(spans))
        sent.addBoth(self._sent)
        return sent

    def _failed(self, failure: Any, count: int) -> None:
        error = failure.value
        why = failure.getErrorMessage()
        if isinstance(error, grpc.Call):  # its repr is a page; its status is a line
            why = f"{error.code().name}: {error.details()}"
        log.warn("Exporting {count} spans failed: {why}", count=count, why=why)

    def _sent(self, _: object) -> None:
        self._sending = None
        if len(self._pending) >= self.batch:
            self._export()
        elif self._pending and self._timer is None:
            self._timer = self.reactor.callLater(self.delay, self._export)

    def flush(self) -> Deferred[None]:
        """Every waiting span sent (at stop)."""
        return self._drain()

    def _drain(self) -> Deferred[None]:
        self._stop_timer()
        if self._sending is None and not self._pending:
            return succeed(None)
        sending = self._sending if self._sending is not None else self._send()
        done: Deferred[None] = Deferred()
        sending.addBoth(lambda _: self._drain().chainDeferred(done))
        return done

    def shutdown(self) -> None:
        pass  # flush() is the stop; the SDK calls this from its atexit hook

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
