"""Reading the Protobuf wire format: varints, length-delimited spans, scalar values.

Readers take ``(data, pos, end)`` with ``pos`` just after a field's tag and return
``(value, next pos)``; values come out as kube's JSON writes them (``[]byte`` as base64,
integral doubles without a fraction).  Error texts follow gogo-protobuf's.
"""

from __future__ import annotations

import struct
from base64 import b64encode
from collections.abc import Callable
from typing import Any

EOF = "unexpected EOF"
NEGATIVE_LENGTH = "proto: negative length found during unmarshaling"

Reader = Callable[[bytes, int, int], tuple[Any, int]]

# Wire types of the scalar kinds that are not length-delimited.
SCALAR_WIRE = {"int32": 0, "int64": 0, "bool": 0, "double": 1}

_unpack_double = struct.Struct("<d").unpack_from


class WireError(ValueError):
    """Bytes that are not a well-formed message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    if byte < 128:
        return byte, pos + 1
    value, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        if byte < 128:
            return value, pos + 1
        shift += 7
        if shift >= 70:
            raise WireError("proto: integer overflow")


def span(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The (start, stop) of the length-delimited value at ``pos``."""
    size, pos = read_varint(data, pos)
    stop = pos + size
    if stop > end:
        raise WireError(past_end(stop))
    return pos, stop


def past_end(stop: int) -> str:
    """Why a length ends past its message: Go's int wraps a length past 2^63 negative."""
    return NEGATIVE_LENGTH if stop >= 1 << 63 else EOF


def read_string(data: bytes, pos: int, end: int) -> tuple[str, int]:
    pos, stop = span(data, pos, end)
    # Go's JSON writes invalid UTF-8 as U+FFFD.
    return data[pos:stop].decode("utf-8", "replace"), stop


def read_bytes(data: bytes, pos: int, end: int) -> tuple[str, int]:
    pos, stop = span(data, pos, end)
    return b64encode(data[pos:stop]).decode("ascii"), stop


def read_int(data: bytes, pos: int, end: int) -> tuple[int, int]:
    value, pos = read_varint(data, pos)
    return (value - (1 << 64) if value >= 1 << 63 else value), pos


def read_int32(data: bytes, pos: int, end: int) -> tuple[int, int]:
    value, pos = read_varint(data, pos)
    return as_int32(value), pos


def as_int32(value: int) -> int:
    """A varint read into an int32 as gogo's code reads it: the bits past 32 are lost."""
    return ((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def read_bool(data: bytes, pos: int, end: int) -> tuple[bool, int]:
    value, pos = read_varint(data, pos)
    return value != 0, pos


def read_double(data: bytes, pos: int, end: int) -> tuple[float | int, int]:
    if pos + 8 > end:
        raise WireError(EOF)
    (value,) = _unpack_double(data, pos)
    # Go writes integral floats without a fraction ("1", not "1.0").
    if value.is_integer() and abs(value) < 1e21:
        return int(value), pos + 8
    return value, pos + 8


SCALAR_READERS: dict[str, Reader] = {
    "string": read_string,
    "bytes": read_bytes,
    "int32": read_int32,
    "int64": read_int,
    "bool": read_bool,
    "double": read_double,
}


def skip(data: bytes, pos: int, end: int, tag: int) -> int:
    """Step over the value of a field the message does not know (a group to its end, as
    gogo's ``skipGenerated`` does)."""
    wire = tag & 7
    if wire == 0:
        return read_varint(data, pos)[1]
    if wire == 2:
        return span(data, pos, end)[1]
    if wire in (1, 5):
        pos += 8 if wire == 1 else 4
        if pos > end:
            raise WireError(EOF)
        return pos
    if wire == 3:
        return _skip_group(data, pos, end)
    if wire == 4:
        raise WireError("proto: unexpected end of group")
    raise WireError(f"proto: illegal wireType {wire}")


def _skip_group(data: bytes, pos: int, end: int) -> int:
    depth = 1
    while depth:
        if pos >= end:
            raise WireError(EOF)
        tag, pos = read_varint(data, pos)
        wire = tag & 7
        if wire == 3:
            depth += 1
        elif wire == 4:
            depth -= 1
        else:
            pos = skip(data, pos, end, tag)
    return pos


def joined(data: bytes, begin: int, upto: int, tag: int) -> bytes:
    """The payloads of every field ``tag`` in ``data[begin:upto]`` (well formed), joined:
    decoding them as one merges them as gogo's code does into the struct it fills."""
    parts = []
    pos = begin
    while pos < upto:
        found, pos = read_varint(data, pos)
        if found == tag:
            start, pos = span(data, pos, upto)
            parts.append(data[start:pos])
        else:
            pos = skip(data, pos, upto, found)
    return b"".join(parts)


def fields_of(
    data: bytes, pos: int, end: int, message: str = "", strings: tuple[str, ...] = ()
) -> dict[int, Any]:
    """A small message read by field number (varints as ints, LEN as bytes); last wins.
    With its ``message`` name and the names of its first fields, all length-delimited
    (``strings``), a field of another wire type fails as gogo's generated code fails."""
    out: dict[int, Any] = {}
    while pos < end:
        tag, pos = read_varint(data, pos)
        if message:
            _check_tag(tag, message, strings)
        if tag & 7 == 0:
            out[tag >> 3], pos = read_varint(data, pos)
        elif tag & 7 == 2:
            start, pos = span(data, pos, end)
            out[tag >> 3] = data[start:pos]
        else:
            pos = skip(data, pos, end, tag)
    if pos != end:
        raise WireError(EOF)
    return out


def _check_tag(tag: int, message: str, strings: tuple[str, ...]) -> None:
    wire, number = tag & 7, tag >> 3
    if wire == 4:
        raise WireError(f"proto: {message}: wiretype end group for non-group")
    if number <= 0:
        raise WireError(f"proto: {message}: illegal tag {number} (wire type {tag})")
    if number <= len(strings) and wire != 2:
        raise WireError(f"proto: wrong wireType = {wire} for field {strings[number - 1]}")


def len_field(values: dict[int, Any], number: int, name: str) -> bytes:
    """A length-delimited field of ``fields_of``'s result (empty when absent)."""
    value = values.get(number, b"")
    if not isinstance(value, bytes):
        raise WireError(f"proto: wrong wireType = 0 for field {name}")
    return value


_UNKNOWN_FIELDS = ("TypeMeta", "Raw", "ContentEncoding", "ContentType")


def split_envelope(data: bytes) -> tuple[str, str, bytes]:
    """``runtime.Unknown`` after the 4-byte prefix -> (apiVersion, kind, raw object bytes),
    in gogo's order: each TypeMeta read as it comes, merged into the ones before it."""
    meta: dict[int, Any] = {}
    raw, pos, end = b"", 4, len(data)
    while pos < end:
        tag, pos = read_varint(data, pos)
        _check_tag(tag, "Unknown", _UNKNOWN_FIELDS)
        if tag in (0x0A, 0x12):  # TypeMeta, Raw
            start, pos = span(data, pos, end)
            if tag == 0x12:
                raw = data[start:pos]
            else:
                meta.update(fields_of(data, start, pos, "TypeMeta", ("APIVersion", "Kind")))
        else:
            pos = skip(data, pos, end, tag)
    if pos != end:
        raise WireError(EOF)
    api_version = len_field(meta, 1, "APIVersion").decode("utf-8", "replace")
    kind = len_field(meta, 2, "Kind").decode("utf-8", "replace")
    return api_version, kind, raw
