"""JSON-shaped dicts -> Protobuf message bytes, driven by the generated field table.

One encoder function per message, built on first use from its fields: a dict from JSON
name to how the field is written (strings, messages and numbers by the loop itself, the
rest by a closure).  The object's own keys drive the walk (a sparse object never visits
the fields it lacks); keys without a field are dropped, as Go's JSON decoding drops them.
``null`` is Go's zero value and writes nothing.  Numbers are written unpacked and every
present field is written, so pointer fields keep their presence (``replicas: 0``).
"""

from __future__ import annotations

import struct
from base64 import b64decode
from collections.abc import Callable
from typing import Any

import orjson

from platform_api.codec.protobuf_schema import Field, fields, special
from platform_api.codec.protobuf_values import SMALL, parse_time, varint
from platform_api.codec.protobuf_wire import SCALAR_WIRE
from platform_api.goduration import parse_duration

Encoder = Callable[[Any], bytes | bytearray]
FieldEncoder = Callable[[bytearray, Any], None]

_ENCODERS: dict[str, Encoder] = {}
_WIRE = SCALAR_WIRE
_pack_double = struct.Struct("<d").pack


def encoder(message: str) -> Encoder:
    """The encoder of ``message``: its JSON value -> the message's bytes."""
    found = _ENCODERS.get(message)
    if found is not None:
        return found

    def trampoline(value: Any) -> bytes | bytearray:  # a recursive type refers to itself
        return _ENCODERS[message](value)

    _ENCODERS[message] = trampoline
    kind = special(message)
    built = _SPECIALS[kind](message) if kind else _build(message)
    _ENCODERS[message] = built
    return built


def _tag(number: int, wire: int) -> bytes:
    return varint((number << 3) | wire)


def _text(value: str) -> bytes:
    data = value.encode()
    return varint(len(data)) + data


def _bytes(value: str) -> bytes:
    data = b64decode(value)
    return varint(len(data)) + data


def _payload(kind: str, ref: str) -> Callable[[Any], bytes | bytearray]:
    """The bytes after a field's tag for one value of this kind (length-prefixed if LEN)."""
    if kind == "string":
        return _text
    if kind == "bytes":
        return _bytes
    if kind in ("int32", "int64"):
        return varint
    if kind == "bool":
        return lambda v: b"\x01" if v else b"\x00"
    if kind == "double":
        return lambda v: _pack_double(float(v))
    child = encoder(ref)

    def message(v: Any) -> bytes:
        body = child(v)
        return varint(len(body)) + body

    return message


def _field_encoder(f: Field) -> FieldEncoder:
    """A closure appending the field (its tag, then each value) to the message's bytes."""
    if f.kind == "map":
        return _map_encoder(f)
    tag = _tag(f.number, _WIRE.get(f.kind, 2))
    payload = _payload(f.kind, f.ref)
    if f.repeated:

        def many(out: bytearray, values: list[Any]) -> None:
            for value in values:
                out += tag
                out += payload(value)

        return many

    def one(out: bytearray, value: Any) -> None:
        out += tag
        out += payload(value)

    return one


def _map_encoder(f: Field) -> FieldEncoder:
    tag = _tag(f.number, 2)
    value_kind = f.ref if f.ref in _WIRE or f.ref in ("string", "bytes") else "message"
    value_tag = _tag(2, _WIRE.get(value_kind, 2))
    payload = _payload(value_kind, f.ref)

    strings = value_kind == "string"

    def entries(out: bytearray, mapping: dict[str, Any]) -> None:
        for key, value in mapping.items():
            if strings and value is not None:
                k, v = key.encode(), value.encode()
                size = len(k) + len(v) + 4
                if size < 128 and len(k) < 128:  # the usual short entry, written in place
                    out += tag
                    out += bytes((size, 0x0A, len(k)))
                    out += k
                    out += bytes((0x12, len(v)))
                    out += v
                    continue
            entry = b"\x0a" + _text(key)
            if value is not None:
                entry += value_tag + payload(value)
            out += tag
            out += varint(len(entry))
            out += entry

    return entries


def _inline_names(message: str) -> frozenset[str]:
    names: set[str] = set()
    for f in fields(message):
        names |= _inline_names(f.ref) if f.inline else {f.json}
    return frozenset(names)


# Fast paths of the encode loop; anything else is a GENERIC closure.
STRING, MESSAGE, MESSAGES, STRINGS, INT, BOOL, GENERIC = range(7)

# (code, tag bytes, child encoder or generic closure)
Entry = tuple[int, bytes, Any]


def _entry(f: Field) -> Entry:
    tag = _tag(f.number, _WIRE.get(f.kind, 2))
    if f.kind == "string":
        return (STRINGS if f.repeated else STRING), tag, None
    if f.kind == "message":
        return (MESSAGES if f.repeated else MESSAGE), tag, encoder(f.ref)
    if f.kind in ("int32", "int64") and not f.repeated:
        return INT, tag, None
    if f.kind == "bool" and not f.repeated:
        return BOOL, tag, None
    return GENERIC, tag, _field_encoder(f)


def _build(message: str) -> Encoder:
    by_json: dict[str, Entry] = {}
    inlines: list[tuple[bytes, Encoder, frozenset[str]]] = []
    for f in fields(message):
        if f.inline:
            inlines.append((_tag(f.number, 2), encoder(f.ref), _inline_names(f.ref)))
        else:
            by_json[f.json] = _entry(f)

    def encode(obj: dict[str, Any]) -> bytearray:
        out = bytearray()
        get = by_json.get
        for key, value in obj.items():
            entry = get(key)
            if entry is None or value is None:
                continue
            code, tag, child = entry
            if code == STRING:
                data = value.encode()
                out += tag
                out += SMALL[len(data)] if len(data) < 128 else varint(len(data))
                out += data
            elif code == MESSAGE:
                body = child(value)
                out += tag
                out += SMALL[len(body)] if len(body) < 128 else varint(len(body))
                out += body
            elif code == MESSAGES:
                for item in value:
                    body = child(item)
                    out += tag
                    out += SMALL[len(body)] if len(body) < 128 else varint(len(body))
                    out += body
            elif code == STRINGS:
                for item in value:
                    data = item.encode()
                    out += tag
                    out += SMALL[len(data)] if len(data) < 128 else varint(len(data))
                    out += data
            elif code == INT:
                out += tag
                out += varint(value)
            elif code == BOOL:
                out += tag
                out += b"\x01" if value else b"\x00"
            else:
                child(out, value)
        for tag, inline, names in inlines:
            sub = {k: v for k, v in obj.items() if k in names}
            if sub:
                body = inline(sub)
                out += tag
                out += varint(len(body))
                out += body
        return out

    return encode


# -- messages whose Go type writes its own JSON ------------------------------------------


def _time(message: str) -> Encoder:
    micro = message.endswith("MicroTime")

    def encode(text: str) -> bytes:
        seconds, nanos = parse_time(text)
        nanos = nanos // 1000 * 1000 if micro else 0
        return b"\x08" + varint(seconds) + b"\x10" + varint(nanos)

    return encode


def _duration(message: str) -> Encoder:
    return lambda text: b"\x08" + varint(parse_duration(text))


def _quantity(message: str) -> Encoder:
    return lambda value: b"\x0a" + _text(value if isinstance(value, str) else str(value))


def _int_or_string(message: str) -> Encoder:
    def encode(value: int | str) -> bytes:
        if isinstance(value, str):
            return b"\x08\x01\x10\x00\x1a" + _text(value)
        return b"\x08\x00\x10" + varint(value) + b"\x1a\x00"

    return encode


def _raw_json(message: str) -> Encoder:
    def encode(value: Any) -> bytes:
        raw = orjson.dumps(value)
        return b"\x0a" + varint(len(raw)) + raw

    return encode


def _list(message: str) -> Encoder:
    (items,) = fields(message)
    append = _field_encoder(items)

    def encode(values: list[Any]) -> bytearray:
        out = bytearray()
        append(out, values)
        return out

    return encode


def _schema_field(message: str, number: int) -> Callable[[Any], bytes]:
    by_number = {f.number: f for f in fields(message)}
    payload = _payload("message", by_number[number].ref)
    tag = _tag(number, 2)
    return lambda value: tag + payload(value)


def _or_bool(message: str) -> Encoder:
    schema = _schema_field(message, 2)

    def encode(value: bool | dict[str, Any]) -> bytes:
        if isinstance(value, dict):
            return b"\x08\x01" + schema(value)
        return b"\x08\x01" if value else b"\x08\x00"

    return encode


def _or_array(message: str) -> Encoder:
    one, many = _schema_field(message, 1), _schema_field(message, 2)

    def encode(value: dict[str, Any] | list[Any]) -> bytes:
        if isinstance(value, list):
            return b"".join(many(item) for item in value)
        return one(value)

    return encode


def _or_string_array(message: str) -> Encoder:
    schema = _schema_field(message, 1)

    def encode(value: dict[str, Any] | list[str]) -> bytes:
        if isinstance(value, list):
            return b"".join(b"\x12" + _text(item) for item in value)
        return schema(value)

    return encode


_SPECIALS: dict[str, Callable[[str], Encoder]] = {
    "time": _time,
    "microtime": _time,
    "duration": _duration,
    "quantity": _quantity,
    "intorstring": _int_or_string,
    "rawjson": _raw_json,
    "list": _list,
    "orbool": _or_bool,
    "orarray": _or_array,
    "orstringarray": _or_string_array,
}
