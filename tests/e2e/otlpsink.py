"""A real OTLP/gRPC trace receiver for the e2e tests (what an OpenTelemetry collector
listens with on 4317): appends each exported span to a file as a JSON line and writes
its port to a file.

``python -m tests.e2e.otlpsink SPANS_FILE PORT_FILE``
"""

from __future__ import annotations

import signal
import sys
import threading
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import orjson
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT"}


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    return getattr(value, which) if which else None


def _attributes(items: list[KeyValue]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, out: Path) -> None:
        self.out = out
        self.lock = threading.Lock()

    def Export(self, request: Any, context: Any) -> Any:
        lines = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(orjson.dumps({
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                        "name": span.name,
                        "kind": KINDS.get(span.kind, str(span.kind)),
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "attributes": _attributes(span.attributes),
                        "links": [
                            {"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()}
                            for link in span.links
                        ],
                        "events": [
                            [event.name, _attributes(event.attributes)] for event in span.events
                        ],
                        "status": span.status.code,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                    }))  # fmt: skip
        with self.lock, self.out.open("ab") as f:
            f.write(b"".join(line + b"\n" for line in lines))
        return trace_service_pb2.ExportTraceServiceResponse()


def main(spans: str, port_file: str) -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(Path(spans)), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    Path(port_file).write_text(str(port))
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


if __name__ == "__main__":
    main(*sys.argv[1:3])
