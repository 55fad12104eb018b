"""Spans batched on the reactor: by time and by size, one export at a time, dropped past
the limit, all sent at stop; and the gRPC target of kube's endpoint forms."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import Clock

from platform_api.apiserver.tracingexport import ReactorSpanProcessor, grpc_target


class Exports:
    """A blocking send run as a Deferred the test fires (``later``) or at once."""

    def __init__(self, later: bool = False) -> None:
        self.later = later
        self.sent: list[list[str]] = []
        self.waiting: list[Deferred[None]] = []

    def send(self, serialized: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(serialized)
        names = [
            span.name
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        self.sent.append(names)

    def run(self, work: Any) -> Deferred[None]:
        if not self.later:
            work()
            return succeed(None)
        done: Deferred[None] = Deferred()
        done.addCallback(lambda _: work())
        self.waiting.append(done)
        return done

    def finish_one(self) -> None:
        self.waiting.pop(0).callback(None)


def processor(exports: Exports, clock: Clock, **limits: int) -> tuple[Any, Any]:
    spans = ReactorSpanProcessor(clock, exports.send, run_blocking=exports.run, **limits)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(spans)
    return spans, provider.get_tracer("t")


def end(tracer: Any, *names: str) -> None:
    for name in names:
        tracer.start_span(name).end()


def test_spans_wait_for_the_delay() -> None:
    clock, exports = Clock(), Exports()
    _, tracer = processor(exports, clock)
    end(tracer, "a", "b")
    assert exports.sent == []
    clock.advance(4.9)
    assert exports.sent == []
    clock.advance(0.1)
    assert exports.sent == [["a", "b"]]
    assert clock.getDelayedCalls() == []  # nothing waits: no timer


def test_a_full_batch_goes_at_once_and_one_export_at_a_time() -> None:
    clock, exports = Clock(), Exports(later=True)
    _, tracer = processor(exports, clock, batch=2)
    end(tracer, "a", "b", "c", "d", "e")
    assert len(exports.waiting) == 1  # a, b on their way; c, d wait for them
    exports.finish_one()
    assert exports.sent == [["a", "b"]]
    exports.finish_one()
    assert exports.sent == [["a", "b"], ["c", "d"]]
    assert exports.waiting == []
    clock.advance(5)  # the last one, alone, after the delay
    exports.finish_one()
    assert exports.sent[-1] == ["e"]


def test_past_the_limit_spans_are_dropped() -> None:
    clock, exports = Clock(), Exports()
    spans, tracer = processor(exports, clock, most=3)
    end(tracer, "a", "b", "c", "d", "e")
    assert spans.dropped == 2
    clock.advance(5)
    assert exports.sent == [["a", "b", "c"]]


def test_unsampled_spans_are_not_sent() -> None:
    clock, exports = Clock(), Exports()
    spans = ReactorSpanProcessor(clock, exports.send, run_blocking=exports.run)
    provider = TracerProvider(sampler=ALWAYS_OFF, shutdown_on_exit=False)
    provider.add_span_processor(spans)
    end(provider.get_tracer("t"), "a")
    clock.advance(5)
    assert exports.sent == []


def test_flush_sends_everything_waiting() -> None:
    clock, exports = Clock(), Exports(later=True)
    spans, tracer = processor(exports, clock, batch=2)
    end(tracer, "a", "b", "c")
    flushed = spans.flush()
    assert not flushed.called
    exports.finish_one()
    assert not flushed.called
    exports.finish_one()
    assert flushed.called
    assert exports.sent == [["a", "b"], ["c"]]
    assert clock.getDelayedCalls() == []
    assert spans.flush().called  # nothing left


def test_a_failed_export_is_logged_and_the_next_goes_on() -> None:
    clock, exports = Clock(), Exports(later=True)
    _, tracer = processor(exports, clock, batch=1)
    end(tracer, "a", "b")
    exports.waiting.pop(0).errback(RuntimeError("collector down"))
    exports.finish_one()
    assert exports.sent == [["b"]]


def test_grpc_targets() -> None:
    assert grpc_target("localhost:4317") == "localhost:4317"
    assert grpc_target("dns://otel:4317") == "dns:///otel:4317"
    assert grpc_target("dns:///otel:4317") == "dns:///otel:4317"
    assert grpc_target("unix:///run/otel.sock") == "unix:///run/otel.sock"
