"""Protobuf message bytes -> JSON-shaped dicts, as kube's Go types would write them as JSON.

gogo-protobuf writes every non-pointer scalar, even ``""`` and ``0``, and leaves out empty
lists and maps; Go's JSON then applies ``omitempty``/``omitzero``, writes absent structs as
``{}`` and absent non-``omitempty`` lists as ``null``.  The decoder does the same from the
field table and writes keys in Go struct order, so its result serializes as kube's JSON
response does.  Unknown fields are skipped, as gogo skips them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from platform_api.codec.protobuf_schema import (
    INLINE,
    OMITEMPTY,
    OMITZERO,
    POINTER,
    Field,
    fields,
    go_name,
    special,
)
from platform_api.codec.protobuf_special import SPECIAL_DECODERS
from platform_api.codec.protobuf_wire import (
    EOF,
    SCALAR_READERS,
    SCALAR_WIRE,
    Reader,
    WireError,
    as_int32,
    joined,
    past_end,
    read_varint,
    skip,
    span,
)

Decoder = Callable[[bytes, int, int], Any]
FieldDecoder = Callable[[bytes, int, int, dict[str, Any]], int]

_DECODERS: dict[str, Decoder] = {}


def decoder(message: str) -> Decoder:
    """The decoder of ``message``: its bytes ``data[pos:end]`` -> its JSON value."""
    found = _DECODERS.get(message)
    if found is not None:
        return found

    def trampoline(data: bytes, pos: int, end: int) -> Any:  # for recursive types
        return _DECODERS[message](data, pos, end)

    _DECODERS[message] = trampoline
    kind = special(message)
    built = SPECIAL_DECODERS[kind](message, decoder) if kind else _build(message)
    _DECODERS[message] = built
    return built


def _reader(kind: str, ref: str) -> Reader:
    if kind in SCALAR_READERS:
        return SCALAR_READERS[kind]
    child = decoder(ref)

    def read_message(data: bytes, pos: int, end: int) -> tuple[Any, int]:
        start, stop = span(data, pos, end)
        return child(data, start, stop), stop

    return read_message


def _repeated(name: str, read: Reader) -> FieldDecoder:
    def many(data: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        value, pos = read(data, pos, end)
        items = out.get(name)
        if items is None:
            out[name] = [value]
        else:
            items.append(value)
        return pos

    return many


def _packed(name: str, read: Reader) -> FieldDecoder:
    def packed(data: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        pos, stop = span(data, pos, end)
        items = out.setdefault(name, [])
        while pos < stop:
            value, pos = read(data, pos, stop)
            items.append(value)
        return stop

    return packed


# Fast paths of the decode loop; anything else is a GENERIC closure.
STRING, STRING_SET, MESSAGE, MESSAGE_SET, MESSAGES, STRINGS = range(6)  # length-delimited
INT, INT_SET, BOOL, BOOL_SET = range(6, 10)  # varints
GENERIC = 10
_FAST_LEN = {"string": STRING, "message": MESSAGE}
_FAST_VARINT = {"int32": INT, "int64": INT, "bool": BOOL}

# (code, JSON name, child decoder or generic closure)
Entry = tuple[int, str, Any]


def _field_entries(f: Field) -> dict[int, Entry]:
    """How the decode loop reads a field, by the tag it arrives under."""
    name = f.json
    if f.kind == "map":
        return {(f.number << 3) | 2: (GENERIC, name, _map_decoder(f))}
    tag = (f.number << 3) | SCALAR_WIRE.get(f.kind, 2)
    child = decoder(f.ref) if f.kind == "message" else None
    if f.repeated:
        if f.kind in ("string", "message"):
            return {tag: (STRINGS if f.kind == "string" else MESSAGES, name, child)}
        read = _reader(f.kind, f.ref)
        entries = {tag: (GENERIC, name, _repeated(name, read))}
        if f.kind in SCALAR_WIRE:
            entries[(f.number << 3) | 2] = (GENERIC, name, _packed(name, read))
        return entries
    # Set-only codes drop Go's zero value: omitempty/omitzero scalars, omitzero structs.
    only_set = bool(f.flags & (OMITEMPTY | OMITZERO) and not f.flags & POINTER)
    if f.kind == "message":
        only_set = bool(f.flags & OMITZERO)
    if f.kind in _FAST_LEN:
        return {tag: (_FAST_LEN[f.kind] + only_set, name, child)}
    if f.kind in _FAST_VARINT:  # an int's entry holds its width where a child would be
        return {tag: (_FAST_VARINT[f.kind] + only_set, name, 32 if f.kind == "int32" else 64)}
    read = _reader(f.kind, f.ref)

    def one(data: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        value, pos = read(data, pos, end)
        if value or not only_set:
            out[name] = value
        return pos

    return {tag: (GENERIC, name, one)}


def _map_decoder(f: Field) -> FieldDecoder:
    name = f.json
    value_kind = f.ref if f.ref in SCALAR_READERS else "message"
    read_value = _reader(value_kind, f.ref)
    value_tag = (2 << 3) | SCALAR_WIRE.get(value_kind, 2)
    absent = b"\x00"  # a zero-length value, read when an entry has none
    read_key = SCALAR_READERS["string"]

    strings = value_kind == "string"

    def entry(data: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        start, stop = span(data, pos, end)
        key: str = ""
        value: Any = None
        seen = False
        if strings and stop - start > 3 and data[start] == 0x0A and data[start + 1] < 128:
            # The usual short entry of a map of strings: key field, then value field.
            split = start + 2 + data[start + 1]
            if split + 1 < stop and data[split] == 0x12 and split + 2 + data[split + 1] == stop:
                key = data[start + 2 : split].decode("utf-8", "replace")
                value = data[split + 2 : stop].decode("utf-8", "replace")
                seen = True
                start = stop
        pos = start
        while pos < stop:
            # gogo's entry loop: a field is a key or a value by number whatever its wire
            # type, read within the whole message (an entry may run past its own end);
            # the next entry starts where this one said it ends.
            tag, pos = read_varint(data, pos)
            number = tag >> 3
            if number == 1:
                key, pos = read_key(data, pos, end)
            elif number == 2:
                value, pos = read_value(data, pos, end)
                seen = True
            else:
                pos = skip(data, pos, end, tag)
                if pos > stop:
                    raise WireError(EOF)
        if not seen:
            value = read_value(absent, 0, 1)[0] if value_tag & 7 == 2 else 0
        mapping = out.get(name)
        if mapping is None:
            out[name] = {key: value}
        else:
            mapping[key] = value
        return stop

    return entry


def go_absent(message: str, f: Field) -> Callable[[], Any] | None:
    """What Go's JSON writes for a field missing from the wire; None: nothing."""
    omitted = f.flags & (OMITEMPTY | OMITZERO)
    if f.flags & INLINE:
        return None
    if f.flags & POINTER:  # a nil pointer: null unless omitted (a PVC's dataSource.apiGroup)
        return None if omitted else lambda: None
    if f.json == "items" and f.repeated and message.endswith("List"):
        return list  # kube writes an empty list's items as [], never null
    if f.kind == "map" or f.repeated or f.kind == "bytes":
        return None if omitted else lambda: None
    if f.kind != "message":
        zero = {"string": "", "bool": False}.get(f.kind, 0)
        return None if omitted else lambda: zero
    if f.flags & OMITZERO or (special(f.ref) == "list" and omitted):
        return None
    if special(f.ref) == "list":  # a named slice: Go's nil writes null
        return lambda: None
    child = decoder(f.ref)
    return lambda: child(b"", 0, 0)


@cache
def go_order(message: str) -> tuple[str, ...]:
    """JSON keys in Go struct order, embedded structs' keys in their place."""
    names: list[str] = []
    for f in fields(message):
        names.extend(go_order(f.ref) if f.inline else (f.json,))
    return tuple(names)


def _unknown(data: bytes, pos: int, end: int, tag: int, message: str) -> int:
    """Skip a field this message lacks; a known field under the wrong wire type is an
    error.  Checked in the order of gogo's generated code, its words."""
    wire, number = tag & 7, as_int32(tag >> 3)
    if wire == 4:
        raise WireError(f"proto: {message.rpartition('.')[2]}: wiretype end group for non-group")
    if number <= 0:
        raise WireError(
            f"proto: {message.rpartition('.')[2]}: illegal tag {number} (wire type {tag})"
        )
    for f in fields(message):
        if f.number == number:
            raise WireError(f"proto: wrong wireType = {wire} for field {go_name(message, f)}")
    return skip(data, pos, end, tag)


def _int64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


Defaults = list[tuple[str, Callable[[], Any]]]


def _plan(message: str) -> tuple[dict[int, Entry], Defaults, Decoder | None, bool]:
    """The decode loop's table, the Go-JSON defaults, the embedded struct, and whether
    field numbers follow Go's field order (then wire order needs no sorting)."""
    by_tag: dict[int, Entry] = {}
    defaults: Defaults = []
    inline: Decoder | None = None
    for f in fields(message):
        if f.inline:  # an embedded struct: Go's JSON writes its fields into this object
            if inline is not None:
                raise NotImplementedError(f"{message}: two embedded structs")
            inline = decoder(f.ref)
            by_tag[(f.number << 3) | 2] = (MESSAGE, "", inline)
            continue
        by_tag.update(_field_entries(f))
        absent = go_absent(message, f)
        if absent is not None:
            defaults.append((f.json, absent))
    numbers = [f.number for f in fields(message)]
    return by_tag, defaults, inline, inline is None and numbers == sorted(numbers)


def _finish(
    out: dict[str, Any],
    ordered: bool,
    defaults: Defaults,
    inline: Decoder | None,
    order: tuple[str, ...],
) -> dict[str, Any]:
    """Add what Go's JSON writes for absent fields; put keys in Go's order."""
    for name, absent in defaults:
        if name not in out:
            out[name] = absent()
            ordered = False
    if inline is not None:
        for name, value in inline(b"", 0, 0).items():
            out.setdefault(name, value)
    if ordered or len(out) < 2:
        return out
    return {name: out[name] for name in order if name in out}


def _build(message: str) -> Decoder:
    by_tag, defaults, inline, in_order = _plan(message)
    order = go_order(message)

    def decode(data: bytes, pos: int, end: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        last, ordered, begin, embedded = 0, in_order, pos, False
        get = by_tag.get
        while pos < end:
            tag = data[pos]
            if tag < 128:
                pos += 1
            else:
                tag, pos = read_varint(data, pos)
            entry = get(tag)
            if entry is None:
                pos = _unknown(data, pos, end, tag, message)
                continue
            if tag < last:
                ordered = False
            last = tag
            code, name, child = entry
            if code < INT:
                size = data[pos]
                if size < 128:
                    pos += 1
                else:
                    size, pos = read_varint(data, pos)
                stop = pos + size
                if stop > end:
                    raise WireError(past_end(stop))
                if code == STRING or (code == STRING_SET and stop > pos):
                    out[name] = data[pos:stop].decode("utf-8", "replace")
                elif code == MESSAGE or (code == MESSAGE_SET and stop > pos):
                    if name in out or (embedded and not name):  # said again: merged
                        merged = joined(data, begin, stop, tag)
                        value = child(merged, 0, len(merged))
                    else:
                        value = child(data, pos, stop)
                    if name:
                        out[name] = value
                    else:
                        out.update(value)
                        embedded = True
                elif code in (MESSAGES, STRINGS):
                    value = (
                        child(data, pos, stop)
                        if code == MESSAGES
                        else data[pos:stop].decode("utf-8", "replace")
                    )
                    items = out.get(name)
                    if items is None:
                        out[name] = [value]
                    else:
                        items.append(value)
                pos = stop
            elif code < GENERIC:
                value = data[pos]
                if value < 128:
                    pos += 1
                else:
                    value, pos = read_varint(data, pos)
                if code >= BOOL:  # BOOL, BOOL_SET
                    if value or code == BOOL:
                        out[name] = value != 0
                elif value >= 0x80000000:  # negative, or wider than an int32 holds
                    value = as_int32(value) if child == 32 else _int64(value)
                    if value or code == INT:
                        out[name] = value
                elif value or code == INT:
                    out[name] = value
            else:
                pos = child(data, pos, end, out)
        if pos != end:
            raise WireError(EOF)
        if ordered and not defaults and inline is None:
            return out
        return _finish(out, ordered, defaults, inline, order)

    return decode
