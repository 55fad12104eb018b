"""Decoders of the messages whose Go type writes its own JSON.

``Time`` and ``MicroTime`` (``Timestamp`` on the wire, RFC 3339 in JSON, ``null`` when
zero), ``Duration`` (nanoseconds -> ``1m30s``), ``Quantity`` (its string), ``IntOrString``
(``{type, intVal, strVal}`` -> a number or a string), ``RawExtension``, ``FieldsV1`` and
apiextensions' ``JSON`` (raw JSON bytes, inlined), the JSON-schema unions of
apiextensions, and named lists such as ``ExtraValue`` (``{items}`` -> a plain list).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from platform_api.codec.protobuf_schema import fields, message_for
from platform_api.codec.protobuf_values import format_micro_time, format_time
from platform_api.codec.protobuf_wire import (
    SCALAR_READERS,
    Reader,
    WireError,
    fields_of,
    len_field,
    read_varint,
    skip,
    span,
    split_envelope,
)
from platform_api.codec.text import BodyError, parse_json
from platform_api.goduration import format_duration

Decoder = Callable[[bytes, int, int], Any]
Lookup = Callable[[str], Decoder]

PREFIX = b"k8s\x00"


def _signed(value: int, bits: int = 64) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


@lru_cache(maxsize=8192)
def _time_text(raw: bytes) -> str:
    return format_time(_signed(fields_of(raw, 0, len(raw)).get(1, 0)))


def _time(message: str, lookup: Lookup) -> Decoder:
    def decode(data: bytes, pos: int, end: int) -> str | None:
        # Timestamps repeat across a list (creation, managed fields): cached by their bytes.
        return _time_text(data[pos:end]) if end > pos else None  # empty: the zero time

    return decode


def _micro_time(message: str, lookup: Lookup) -> Decoder:
    def decode(data: bytes, pos: int, end: int) -> str | None:
        if pos == end:
            return None
        values = fields_of(data, pos, end)
        return format_micro_time(_signed(values.get(1, 0)), _signed(values.get(2, 0), 32))

    return decode


def _duration(message: str, lookup: Lookup) -> Decoder:
    return lambda data, pos, end: format_duration(_signed(fields_of(data, pos, end).get(1, 0)))


def _quantity(message: str, lookup: Lookup) -> Decoder:
    def decode(data: bytes, pos: int, end: int) -> str:
        text = len_field(fields_of(data, pos, end), 1, "String_")
        return text.decode("utf-8", "replace") if text else "0"  # a zero Quantity writes "0"

    return decode


def _int_or_string(message: str, lookup: Lookup) -> Decoder:
    def decode(data: bytes, pos: int, end: int) -> int | str:
        values = fields_of(data, pos, end)
        if values.get(1, 0) == 1:
            return len_field(values, 3, "StrVal").decode("utf-8", "replace")
        return _signed(values.get(2, 0), 32)

    return decode


def raw_json(raw: bytes, lookup: Lookup) -> Any:
    """Raw bytes as the JSON value they hold; an embedded Protobuf object is decoded."""
    if not raw:
        return None
    if raw[:4] == PREFIX:
        api_version, kind, body = split_envelope(raw)
        message = message_for(api_version, kind)
        if message is None:
            raise WireError(f'no kind "{kind}" is registered for version "{api_version}"')
        obj = lookup(message)(body, 0, len(body))
        return {"kind": kind, "apiVersion": api_version, **obj}
    try:  # the bounded parser every request body goes through
        return parse_json(raw, unstructured=True)[0]
    except BodyError as e:
        raise WireError(f"invalid raw JSON: {e}") from None


def _raw_json(message: str, lookup: Lookup) -> Decoder:
    return lambda data, pos, end: raw_json(len_field(fields_of(data, pos, end), 1, "Raw"), lookup)


def _list(message: str, lookup: Lookup) -> Decoder:
    (items,) = fields(message)
    tag, read = (items.number << 3) | 2, SCALAR_READERS[items.kind]

    def decode(data: bytes, pos: int, end: int) -> list[Any]:
        out = []
        while pos < end:
            found, pos = read_varint(data, pos)
            if found == tag:
                value, pos = read(data, pos, end)
                out.append(value)
            else:
                pos = skip(data, pos, end, found)
        return out

    return decode


def _union(data: bytes, pos: int, end: int, read: Reader) -> tuple[Any, list[Any], bool]:
    """Field 1 (a value) and field 2 (repeated values) of an apiextensions union."""
    first, items, allows = None, [], False
    while pos < end:
        tag, pos = read_varint(data, pos)
        if tag == 0x0A:
            first = span(data, pos, end)
            pos = first[1]
        elif tag == 0x12:
            value, pos = read(data, pos, end)
            items.append(value)
        elif tag == 0x08:
            value, pos = read_varint(data, pos)
            allows = value != 0
        else:
            pos = skip(data, pos, end, tag)
    return first, items, allows


def _schema_reader(message: str, lookup: Lookup) -> tuple[Decoder, Reader]:
    schema = lookup(message.rpartition(".")[0] + ".JSONSchemaProps")

    def read(data: bytes, pos: int, end: int) -> tuple[Any, int]:
        start, stop = span(data, pos, end)
        return schema(data, start, stop), stop

    return schema, read


def _or_bool(message: str, lookup: Lookup) -> Decoder:
    """``additionalProperties``: a schema, else the boolean."""
    _, read = _schema_reader(message, lookup)

    def decode(data: bytes, pos: int, end: int) -> Any:
        _, schemas, allows = _union(data, pos, end, read)
        return schemas[-1] if schemas else allows

    return decode


def _or_array(message: str, lookup: Lookup) -> Decoder:
    """``items``: a list of schemas if any, else the one schema (or null)."""
    schema, read = _schema_reader(message, lookup)

    def decode(data: bytes, pos: int, end: int) -> Any:
        first, schemas, _ = _union(data, pos, end, read)
        if schemas:
            return schemas
        return None if first is None else schema(data, *first)

    return decode


def _or_string_array(message: str, lookup: Lookup) -> Decoder:
    """``dependencies`` values: a list of property names if any, else the schema."""
    schema, _ = _schema_reader(message, lookup)

    def decode(data: bytes, pos: int, end: int) -> Any:
        first, names, _ = _union(data, pos, end, SCALAR_READERS["string"])
        if names:
            return names
        return None if first is None else schema(data, *first)

    return decode


SPECIAL_DECODERS: dict[str, Callable[[str, Lookup], Decoder]] = {
    "time": _time,
    "microtime": _micro_time,
    "duration": _duration,
    "quantity": _quantity,
    "intorstring": _int_or_string,
    "rawjson": _raw_json,
    "list": _list,
    "orbool": _or_bool,
    "orarray": _or_array,
    "orstringarray": _or_string_array,
}
