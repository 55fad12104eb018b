"""otelgrpc's client spans, as kube's etcd client makes them under a traced request's
storage spans: named for the method (``etcdserverpb.KV/Txn``), with the server's address,
a ``message`` event for the request sent and the response received, and the gRPC
status by name (an error status for any code but OK).  Imported with tracing.py only."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from platform_api.storage.etcd.grpcwire import code_name

GRPC_SCOPE = "go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"


class GrpcCallSpan:
    """One unary call's client span (storage/spans.py's ``GrpcCall``)."""

    def __init__(self, tracer: Any, parent: Any, method: str, host: str, port: int) -> None:
        self._span = tracer.start_span(
            method,
            context=trace.set_span_in_context(parent),
            kind=trace.SpanKind.CLIENT,
            attributes={
                "rpc.method": method,
                "rpc.system.name": "grpc",
                "server.address": host,
                "server.port": port,
            },
        )

    def sent(self, size: int) -> None:
        self._message("SENT", size)

    def received(self, size: int) -> None:
        self._message("RECEIVED", size)

    def _message(self, kind: str, size: int) -> None:
        self._span.add_event(
            "message",
            {
                "rpc.message.type": kind,
                "rpc.message.id": 1,  # a unary call's one message each way
                "rpc.message.compressed_size": size,  # etcd's client compresses nothing
                "rpc.message.uncompressed_size": size,
            },
        )

    def end(self, code: int, message: str) -> None:
        self._span.set_attribute("rpc.response.status_code", code_name(code))
        if code:
            self._span.set_status(Status(StatusCode.ERROR, message))
        self._span.end()
