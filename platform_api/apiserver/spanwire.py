"""Finished spans written straight to OTLP's protobuf wire format.

The SDK's ``encode_spans`` builds a tree of generated message objects, one per span,
event, attribute and value, and then serializes it: with every request traced that took
a quarter of the reactor's time (py-spy, benchmarks/tracingbench.py).  The bytes here
are the same message (``ExportTraceServiceRequest``, opentelemetry-proto's trace/v1)
written field by field, as the SDK's encoder fills it: resource, then scope, then span,
each group in the order its first span ended; proto3's defaults left out, values of a
oneof written even when they are the default (``AnyValue``'s ``false`` and ``0``).
The unit tests parse both encodings and compare them.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind
from twisted.logger import Logger

from platform_api.codec.protobuf_values import SMALL, varint

log = Logger()
_LEN, _I64, _I32 = 2, 1, 5  # wire types besides varint (0)
_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack
_double = struct.Struct("<d").pack
# SpanKind's OTLP numbers: the API's enum starts at INTERNAL = 0, OTLP's at 1.
_KIND = {kind: kind.value + 1 for kind in SpanKind}
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200  # SpanFlags' context masks
_INT64 = (-(2**63), 2**63 - 1)


def _tag(number: int, wire: int) -> bytes:
    return varint((number << 3) | wire)


def _len(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field (``tag`` made by ``_tag(n, _LEN)``): a message, a
    string's UTF-8, bytes."""
    size = len(payload)
    return tag + (SMALL[size] if size < 128 else varint(size)) + payload


def _text(tag: bytes, value: str | None) -> bytes:
    return _len(tag, value.encode()) if value else b""


def _count(tag: bytes, value: int) -> bytes:
    return tag + varint(value) if value else b""


_T1, _T2, _T3, _T4, _T5, _T6, _T7 = (_tag(n, _LEN) for n in range(1, 8))
_T9, _T11, _T13, _T15 = (_tag(n, _LEN) for n in (9, 11, 13, 15))
_C3, _C4, _C5, _C6, _C10, _C12, _C14 = (_tag(n, 0) for n in (3, 4, 5, 6, 10, 12, 14))
_F1, _F7, _F8 = _tag(1, _I64), _tag(7, _I64), _tag(8, _I64)
_FLAGS_LOCAL = _tag(16, _I32) + _fixed32(_HAS_IS_REMOTE)
_FLAGS_REMOTE = _tag(16, _I32) + _fixed32(_HAS_IS_REMOTE | _IS_REMOTE)
_LINK_LOCAL = _tag(6, _I32) + _fixed32(_HAS_IS_REMOTE)
_LINK_REMOTE = _tag(6, _I32) + _fixed32(_HAS_IS_REMOTE | _IS_REMOTE)


def _value(value: Any) -> bytes:
    """An ``AnyValue``; its oneof is written even when the value is the default."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10" + (b"\x01" if value else b"\x00")
    if isinstance(value, str):
        return _len(_T1, value.encode())
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:  # as the generated message refuses it
            raise ValueError(f"Value out of range: {value}")
        return b"\x18" + varint(value)
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if isinstance(value, bytes):
        return _len(_T7, value)
    if isinstance(value, Sequence):
        return _len(_T5, b"".join(_len(_T1, _value(v)) for v in value))
    if isinstance(value, Mapping):
        return _len(_T6, b"".join(_len(_T1, _key_value(str(k), v)) for k, v in value.items()))
    raise TypeError(f"Invalid type {type(value)} of value {value}")


def _key_value(key: str, value: Any) -> bytes:
    return _text(_T1, key) + _len(_T2, _value(value))


# Attributes repeat from span to span (a verb, a resource, a status code): each one's
# field, as written, by (field tag, key, the value's type, value).  Emptied when full,
# so that values seen once (audit IDs, object names) do not keep it full.
_SEEN: dict[tuple[bytes, str, type, Any], bytes] = {}
_SEEN_MOST = 4096


def _attributes(tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
    if not attributes:
        return b""
    out = []
    seen = _SEEN
    for key, value in attributes.items():
        known = (tag, key, value.__class__, value)
        try:
            out.append(seen[known])
            continue
        except KeyError:
            pass
        except TypeError:  # a list: not hashable, not kept
            known = None  # type: ignore[assignment]
        try:
            field = _len(tag, _key_value(key, value))
        except (TypeError, ValueError) as e:  # the SDK's encoder logs it and goes on
            log.warn("Failed to encode key {key!r}: {error!r}", key=key, error=str(e))
            continue
        if known is not None:
            if len(seen) >= _SEEN_MOST:
                seen.clear()
            seen[known] = field
        out.append(field)
    return b"".join(out)


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    parts = [
        _T1 + b"\x10" + context.trace_id.to_bytes(16, "big"),
        _T2 + b"\x08" + context.span_id.to_bytes(8, "big"),
    ]
    if context.trace_state:
        parts.append(_text(_T3, ",".join(f"{k}={v}" for k, v in context.trace_state.items())))
    if parent is not None:
        parts.append(_T4 + b"\x08" + parent.span_id.to_bytes(8, "big"))
    parts.append(_text(_T5, span.name))
    parts.append(_C6 + SMALL[_KIND[span.kind]])
    if span.start_time:
        parts.append(_F7 + _fixed64(span.start_time))
    if span.end_time:
        parts.append(_F8 + _fixed64(span.end_time))
    parts.append(_attributes(_T9, span.attributes))
    parts.append(_count(_C10, span.dropped_attributes))
    for event in span.events:
        body = (_F1 + _fixed64(event.timestamp) if event.timestamp else b"") + (
            _text(_T2, event.name)
            + _attributes(_T3, event.attributes)
            + _count(_C4, event.dropped_attributes)
        )
        parts.append(_len(_T11, body))
    parts.append(_count(_C12, span.dropped_events))
    for link in span.links:
        body = (
            _T1
            + b"\x10"
            + link.context.trace_id.to_bytes(16, "big")
            + _T2
            + b"\x08"
            + link.context.span_id.to_bytes(8, "big")
            + _attributes(_T4, link.attributes)
            + _count(_C5, link.dropped_attributes)
            + (_LINK_REMOTE if link.context.is_remote else _LINK_LOCAL)
        )
        parts.append(_len(_T13, body))
    parts.append(_count(_C14, span.dropped_links))
    status = span.status
    parts.append(_len(_T15, _text(_T2, status.description) + _count(_C3, status.status_code.value)))
    parts.append(_FLAGS_REMOTE if parent is not None and parent.is_remote else _FLAGS_LOCAL)
    return b"".join(parts)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    return _text(_T1, scope.name) + _text(_T2, scope.version) + _attributes(_T3, scope.attributes)


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialized ``ExportTraceServiceRequest`` of ``spans``."""
    # Grouped as the SDK groups them, by equal resources; looked up by identity first,
    # since a Resource hashes by serializing its attributes to JSON.
    grouped: list[tuple[Resource, dict[InstrumentationScope | None, list[bytes]]]] = []
    by_identity: dict[int, dict[InstrumentationScope | None, list[bytes]]] = {}
    for span in spans:
        try:
            written = _span(span)
        except (TypeError, ValueError) as e:  # a name that is not UTF-8: the span alone
            log.warn("Dropped span {name!r}: {error!r}", name=span.name, error=str(e))
            continue
        resource = span.resource
        scopes = by_identity.get(id(resource))
        if scopes is None:
            scopes = next((found for r, found in grouped if r == resource), None)
            if scopes is None:
                scopes = {}
                grouped.append((resource, scopes))
            by_identity[id(resource)] = scopes
        scopes.setdefault(span.instrumentation_scope or None, []).append(written)
    out = []
    for resource, scopes in grouped:
        body = [_len(_T1, _attributes(_T1, resource.attributes))]
        for scope, encoded in scopes.items():
            inner = _len(_T1, _scope(scope)) + b"".join(_len(_T2, s) for s in encoded)
            if scope is not None:
                inner += _text(_T3, scope.schema_url)
            body.append(_len(_T2, inner))
        body.append(_text(_T3, resource.schema_url))
        out.append(_len(_T1, b"".join(body)))
    return b"".join(out)
