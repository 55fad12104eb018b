"""The values kube's Go types write by hand: times, durations, varints.

``metav1.Time`` is RFC 3339 in seconds on the JSON side and ``Timestamp{seconds, nanos}``
on the wire; ``MicroTime`` keeps microseconds; ``metav1.Duration`` is Go's
``time.Duration`` text (``1m30s``) in JSON and nanoseconds on the wire.  Timestamps repeat
across a list (one per object and per managed-fields entry), so conversions are cached.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from platform_api.gotext import go_time

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MASK64 = (1 << 64) - 1
SMALL = [bytes((i,)) for i in range(128)]  # one-byte varints


class ValueFormatError(ValueError):
    """A JSON value that the Go type would refuse (bad time, bad duration)."""


def varint(value: int) -> bytes:
    """Protobuf base-128 varint; negative numbers as 64-bit two's complement."""
    if 0 <= value < 128:
        return SMALL[value]
    if value < 0:
        value &= MASK64
    out = bytearray()
    while value > 127:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def signed64(value: int) -> int:
    """A decoded varint read as Go's int64 (int32 negatives are sign-extended on the wire)."""
    return value - (1 << 64) if value >= 1 << 63 else value


# -- times ------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def format_time(seconds: int) -> str:
    """``metav1.Time`` JSON: UTC, whole seconds."""
    return go_time(_EPOCH + timedelta(seconds=seconds), "")


def format_micro_time(seconds: int, nanos: int) -> str:
    """``metav1.MicroTime`` JSON: UTC with six fractional digits."""
    return go_time(_EPOCH + timedelta(seconds=seconds), f".{nanos // 1000:06d}")


@lru_cache(maxsize=8192)
def parse_time(text: str) -> tuple[int, int]:
    """RFC 3339 (as Go's ``time.RFC3339`` parses it) -> (seconds, nanoseconds)."""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValueFormatError(f"parsing time {text!r} as RFC 3339") from None
    if dt.tzinfo is None:
        raise ValueFormatError(f"parsing time {text!r} as RFC 3339: missing time zone")
    delta = dt - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    nanos = delta.microseconds * 1000
    # fromisoformat keeps microseconds only; Go keeps nanoseconds.
    if m := re.search(r"\.(\d{7,9})", text):
        nanos = int(m.group(1).ljust(9, "0"))
    return seconds, nanos
