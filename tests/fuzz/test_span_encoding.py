"""Property test of spanwire: for any attributes a span may carry (every value type the
SDK's encoder knows, integers past int64 and strings with lone surrogates among them),
our bytes are the SDK's serialization (``ExportTraceServiceRequest.SerializeToString``).
Compared as bytes: a NaN attribute makes parsed messages unequal to themselves."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode

from platform_api.apiserver.spanwire import encode_spans
from tests.apiserver.test_spanwire import Kept, provider

# Text with lone surrogates too (a value decoded with surrogateescape): not UTF-8.
TEXT = st.one_of(
    st.text(), st.builds(str.__add__, st.text(max_size=3), st.sampled_from(["\udcff", "\ud800x"]))
)
SCALARS = st.one_of(
    TEXT,
    st.booleans(),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(),
    st.binary(max_size=8),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(st.text(max_size=5), max_size=3),
    st.lists(st.integers(min_value=-(1 << 64), max_value=1 << 64), max_size=3),
    st.lists(st.floats(), max_size=3),
    st.lists(st.booleans(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
ATTRIBUTES = st.dictionaries(TEXT, VALUES, max_size=6)


@contextlib.contextmanager
def _sdk_encoder_quiet() -> Iterator[None]:
    """The SDK's encoder logs each key it drops as it is, lone surrogates and all, and a
    record that is not UTF-8 cannot travel back from a pytest-xdist worker."""
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.common._internal")
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = False


@given(ATTRIBUTES, st.lists(ATTRIBUTES, max_size=3), st.text(max_size=10))
def test_any_attributes_encode_as_the_sdk_serializes_them(
    attributes: dict[str, Any], events: list[dict[str, Any]], event_name: str
) -> None:
    kept = Kept()
    tracer = provider(kept).get_tracer("fuzz")
    span = tracer.start_span("fuzzed")
    for _ in events:
        span.add_event(event_name, {})
    span.end()
    # Set past the API's checks: what reaches the encoder is what is compared.
    readable = kept.spans[0]
    readable._attributes = attributes  # type: ignore[assignment]
    for event, extra in zip(readable.events, events, strict=True):
        event._attributes = extra  # type: ignore[attr-defined]
    with _sdk_encoder_quiet():
        try:
            expected = sdk_encode([readable]).SerializeToString()
        except (UnicodeEncodeError, ValueError):  # the SDK's encoder fails the whole batch
            return
    assert encode_spans([readable]) == expected
