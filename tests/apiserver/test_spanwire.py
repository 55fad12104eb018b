"""Our OTLP encoding is the SDK's: the same bytes, and parsed, the same message, for
spans of every shape a server makes (and some it does not)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    set_span_in_context,
)
from opentelemetry.trace.span import TraceFlags, TraceState

from platform_api.apiserver import spanwire
from platform_api.apiserver.spanwire import encode_spans


class Kept(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Any) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


def provider(kept: Kept, **attributes: Any) -> TracerProvider:
    made = TracerProvider(resource=Resource.create(attributes), shutdown_on_exit=False)
    made.add_span_processor(SimpleSpanProcessor(kept))
    return made


def same(spans: list[ReadableSpan]) -> None:
    ours = encode_spans(spans)
    theirs = sdk_encode(spans)
    assert ExportTraceServiceRequest.FromString(ours) == theirs
    assert ours == theirs.SerializeToString()


def test_a_plain_span() -> None:
    kept = Kept()
    provider(kept, **{"service.name": "apiserver"}).get_tracer("t").start_span("x").end()
    same(kept.spans)


def test_every_attribute_value_and_the_oneof_defaults() -> None:
    kept = Kept()
    tracer = provider(kept).get_tracer("scope", "1.2", schema_url="https://s")
    span = tracer.start_span(
        "values",
        kind=SpanKind.SERVER,
        attributes={
            "s": "text ü",
            "empty": "",
            "t": True,
            "f": False,
            "zero": 0,
            "n": 300,
            "negative": -5,
            "big": 2**62,
            "d": 1.5,
            "d0": 0.0,
            "strings": ("a", "b"),
            "ints": [1, -2],
            "bools": [True, False],
            "floats": (0.5,),
            "none": [],
        },
    )
    span.set_status(Status(StatusCode.ERROR, "it broke"))
    span.end()
    same(kept.spans)


def test_events_links_parents_and_trace_state() -> None:
    kept = Kept()
    tracer = provider(kept).get_tracer("t")
    remote = SpanContext(
        trace_id=0x0123456789ABCDEF0123456789ABCDEF,
        span_id=0x1122334455667788,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=TraceState([("vendor", "v1"), ("other", "x")]),
    )
    parent = set_span_in_context(NonRecordingSpan(remote))
    link = Link(remote, {"why": "batch", "n": 2})
    with tracer.start_as_current_span("outer", context=parent, links=[link]) as outer:
        outer.add_event("About to Encode")
        outer.add_event("Encode succeeded", {"len": 123}, timestamp=1_700_000_000_000_000_001)
        with tracer.start_as_current_span("inner", kind=SpanKind.CLIENT) as inner:
            inner.set_status(Status(StatusCode.OK))
    same(kept.spans)


def test_scopes_and_resources_group_in_the_order_their_first_span_ended() -> None:
    kept = Kept()
    first, second = provider(kept, host="a"), provider(kept, host="b")
    again = provider(kept, host="a")  # an equal resource, another object: grouped with a's
    for made, scope in ((first, "x"), (second, "y"), (first, "y"), (again, "x"), (second, "y")):
        made.get_tracer(scope).start_span(f"{scope}-span").end()
    assert len(kept.spans) == 5
    assert kept.spans[0].resource is not kept.spans[3].resource
    same(kept.spans)
    assert len(ExportTraceServiceRequest.FromString(encode_spans(kept.spans)).resource_spans) == 2


def test_no_spans() -> None:
    same([])


@pytest.mark.parametrize(
    "value", [{"a": 1}, b"\x00\xff", 2**63, -(2**63) - 1, [1, 2**64], 2**63 - 1, -(2**63)]
)
def test_values_the_api_does_not_keep_are_encoded_as_the_sdk_would(value: Any) -> None:
    """Attributes are checked on the way in; a processor may still hand over a mapping
    or bytes (the SDK's encoder has cases for both).  An integer past int64 is dropped
    with its attribute, as the generated message refuses it (a longer varint would make
    the whole request unreadable)."""
    kept = Kept()
    provider(kept).get_tracer("t").start_span("x").end()
    span = kept.spans[0]
    span._attributes = {"odd": value, "fine": 1}  # type: ignore[assignment]
    same([span])


def test_remembered_attributes_keep_their_types_and_the_memory_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``True == 1 == 1.0`` and they hash alike: each is remembered as its own type."""
    monkeypatch.setattr(spanwire, "_SEEN", {})
    monkeypatch.setattr(spanwire, "_SEEN_MOST", 3)
    kept = Kept()
    tracer = provider(kept).get_tracer("t")
    for value in (True, 1, 1.0, True, 1, "1", 1.0):
        tracer.start_span("x", attributes={"v": value, "n": "same"}).end()
    same(kept.spans)
    assert len(spanwire._SEEN) <= 3


def test_a_span_that_cannot_be_encoded_is_dropped_alone() -> None:
    """The SDK's encoder fails the whole batch on a name that is not UTF-8 (a lone
    surrogate); here only that span is lost, and the export goes on."""
    kept = Kept()
    tracer = provider(kept).get_tracer("t")
    tracer.start_span("before").end()
    tracer.start_span("bad \udcff").end()
    tracer.start_span("after").end()
    provider(kept, host="other").get_tracer("t").start_span("only \udcff").end()
    request = ExportTraceServiceRequest.FromString(encode_spans(kept.spans))
    names = [s.name for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]
    assert names == ["before", "after"]
    assert len(request.resource_spans) == 1  # no empty group for the other resource
    same([kept.spans[0], kept.spans[2]])
