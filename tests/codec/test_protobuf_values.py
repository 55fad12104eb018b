"""RFC 3339 times, varints, and the messages that write them (Duration's text: test_goduration)."""

from __future__ import annotations

import pytest

from platform_api.codec.protobuf_decode import decoder
from platform_api.codec.protobuf_encode import encoder
from platform_api.codec.protobuf_values import (
    ValueFormatError,
    format_micro_time,
    format_time,
    parse_time,
    varint,
)

SECOND = 1_000_000_000
DURATION = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration"


def test_duration_message() -> None:
    assert encoder(DURATION)("1m30s") == b"\x08" + varint(90 * SECOND)
    body = bytes(encoder(DURATION)("-2s"))
    assert decoder(DURATION)(body, 0, len(body)) == "-2s"
    assert decoder(DURATION)(b"", 0, 0) == "0s"


def test_times() -> None:
    assert parse_time("2024-01-02T03:04:05Z") == (1704164645, 0)
    assert parse_time("2024-01-02T04:04:05+01:00") == (1704164645, 0)
    assert parse_time("2024-01-02T03:04:05.123456789Z") == (1704164645, 123456789)
    assert format_time(1704164645) == "2024-01-02T03:04:05Z"
    assert format_time(-1) == "1969-12-31T23:59:59Z"
    assert format_micro_time(1704164645, 123456789) == "2024-01-02T03:04:05.123456Z"
    with pytest.raises(ValueFormatError):
        parse_time("yesterday")
    with pytest.raises(ValueFormatError):
        parse_time("2024-01-02T03:04:05")  # RFC 3339 needs a zone


def test_time_messages_drop_or_keep_the_fraction() -> None:
    time = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
    micro = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
    text = "2024-01-02T03:04:05.123456789Z"
    body = bytes(encoder(time)(text))
    assert body == b"\x08" + varint(1704164645) + b"\x10\x00"  # Time: seconds only
    assert decoder(time)(body, 0, len(body)) == "2024-01-02T03:04:05Z"
    body = bytes(encoder(micro)(text))
    assert body == b"\x08" + varint(1704164645) + b"\x10" + varint(123456000)
    assert decoder(micro)(body, 0, len(body)) == "2024-01-02T03:04:05.123456Z"
    assert decoder(time)(b"", 0, 0) is None  # the zero time writes null


def test_varint() -> None:
    assert varint(0) == b"\x00"
    assert varint(127) == b"\x7f"
    assert varint(300) == b"\xac\x02"
    assert varint(-1) == b"\xff" * 9 + b"\x01"  # 64-bit two's complement, as Go


def test_int_or_string_and_quantity() -> None:
    ios = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
    quantity = "k8s.io.apimachinery.pkg.api.resource.Quantity"
    for value in (8080, -1, "25%", "", 0):
        body = bytes(encoder(ios)(value))
        assert decoder(ios)(body, 0, len(body)) == value
    assert encoder(ios)("http") == b"\x08\x01\x10\x00\x1a\x04http"  # as gogo writes it
    assert encoder(quantity)(2) == b"\x0a\x012"  # a JSON number parses as a quantity
    assert decoder(quantity)(b"", 0, 0) == "0"
