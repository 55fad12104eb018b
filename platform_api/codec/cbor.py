"""CBOR as kube-apiserver writes and reads it (gate ``CBORServingAndStorage``), on cbor2.

Writing: the self-described tag (``d9 d9 f7``) first, then the object with every string,
map keys included, as a byte string (kube's encoder does so rather than check UTF-8);
a ``[]byte`` field (Secret data, CA bundles...) as tag 22 over the raw bytes, so typed
Go clients get the bytes and not their base64; a float in the narrowest of float16,
float32 and float64 that holds it exactly, subnormals included (kube's ShortestFloat16).

Reading follows kube's decode mode: duplicate map keys, NaN and infinities, bignums and
simple values other than false/true/null are refused; byte strings read as text; tags
21/22/23 over bytes mean "show as base64url/base64/hex"; any other tag stands for its
content.  Errors carry fxamacker/cbor's wording, which kube's messages embed.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import math
import struct
from collections.abc import Mapping
from typing import Any

import cbor2

from platform_api.codec.bounds import SAFE_DEPTH

SELF_DESCRIBED = b"\xd9\xd9\xf7"
# The JSON bound (codec.bounds) holds for CBOR too: the stages after decoding recurse.
MAX_DEPTH = SAFE_DEPTH

# A tree of the []byte fields of a kind: field name -> subtree, True at a []byte value,
# "*" for every value of a map; lists are transparent.
ByteFields = Mapping[str, Any]

# Tags cbor2 would turn into Python objects (datetimes, Fractions, UUIDs, shared
# references...); kube knows none of them beyond bignums, so each becomes a plain tag.
_CBOR2_TAGS = (
    *(0, 1, 2, 3, 4, 5, 21, 22, 23, 24, 25, 28, 29, 30, 35, 36, 37, 52, 54, 100),
    *(256, 258, 260, 261, 262, 263, 1004, 55799),
)
_AS_TAGS = {
    tag: (lambda value, _immutable, tag=tag: cbor2.CBORTag(tag, value)) for tag in _CBOR2_TAGS
}


class CBORError(ValueError):
    """Undecodable CBOR.  ``late``: kube notices it only while decoding into the type,
    so its message names the type rather than "unable to determine group/version/kind"."""

    def __init__(self, message: str, late: bool = False) -> None:
        super().__init__(message)
        self.late = late


# -- writing ----------------------------------------------------------------------------


def encode(obj: Any, byte_fields: ByteFields | None = None) -> bytes:
    """One object (or list, Status...) as a whole CBOR body."""
    return SELF_DESCRIBED + encode_item(obj, byte_fields)


def encode_item(obj: Any, byte_fields: ByteFields | None = None) -> bytes:
    """One data item, untagged: what a list's element or a body after the tag is."""
    wire = _wire(obj) if not byte_fields else _wire_bytes(obj, byte_fields)
    return cbor2.dumps(wire, default=_write_float)


def encode_list(api_version: str, list_kind: str, list_meta: Any, items: list[bytes]) -> bytes:
    """A whole list body around its items' encodings (``encode_item``), in the order of
    the JSON list: kind, apiVersion, metadata, items."""
    return b"".join(
        (
            SELF_DESCRIBED,
            b"\xa4",
            _text(b"kind"),
            _text(list_kind.encode()),
            _text(b"apiVersion"),
            _text(api_version.encode()),
            _text(b"metadata"),
            encode_item(list_meta),
            _text(b"items"),
            _head(0x80, len(items)),
            *items,
        )
    )


def _wire(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return value.encode()
    if kind is dict:
        return {k.encode(): _wire(v) for k, v in value.items()}
    if kind is list:
        return [_wire(v) for v in value]
    if kind is float:
        return _Float(value)
    return value


class _Float:
    """A float for ``_write_float``: cbor2 writes every float as float64."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value


def _write_float(encoder: Any, item: _Float) -> None:
    encoder.write(shortest_float(item.value))


def shortest_float(value: float) -> bytes:
    """``value`` as the narrowest CBOR float that holds it exactly (NaN and infinities
    never reach here: JSON has neither, and CBOR bodies with them are refused)."""
    for head, fmt in ((b"\xf9", ">e"), (b"\xfa", ">f")):
        try:
            packed = struct.pack(fmt, value)
        except OverflowError:
            continue
        if struct.unpack(fmt, packed)[0] == value:
            return head + packed
    return b"\xfb" + struct.pack(">d", value)


def _wire_bytes(value: Any, tree: Any) -> Any:
    if tree is True and type(value) is str:
        try:
            return cbor2.CBORTag(22, base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            return value.encode()
    if type(value) is list:
        return [_wire_bytes(v, tree) for v in value]
    if type(value) is not dict or not isinstance(tree, Mapping):
        return _wire(value)
    every = tree.get("*")
    out = {}
    for key, item in value.items():
        below = tree.get(key, every)
        out[key.encode()] = _wire(item) if below is None else _wire_bytes(item, below)
    return out


def _head(major: int, size: int) -> bytes:
    """The head of an item of ``major`` type (0x40 bytes, 0x80 array...) and ``size``."""
    if size < 24:
        return bytes((major | size,))
    if size < 256:
        return bytes((major | 24, size))
    if size < 65536:
        return bytes((major | 25,)) + size.to_bytes(2, "big")
    return bytes((major | 26,)) + size.to_bytes(4, "big")


def _text(value: bytes) -> bytes:
    """A byte string item."""
    return _head(0x40, len(value)) + value


def watch_event(event_type: str, body: bytes) -> bytes:
    """One item of an ``application/cbor-seq`` watch: ``{type, object}`` with the object's
    own encoding (self-described, as kube nests it) spliced in unchanged."""
    return (
        SELF_DESCRIBED
        + b"\xa2"
        + _text(b"type")
        + _text(event_type.encode())
        + _text(b"object")
        + body
    )


# -- reading ----------------------------------------------------------------------------


def decode(data: bytes) -> Any:
    """A request body as JSON values (dicts, lists, str, int, float, bool, None)."""
    if not data:
        raise CBORError("EOF")
    stream = io.BytesIO(data)
    decoder = cbor2.CBORDecoder(
        stream,
        semantic_decoders=_AS_TAGS,
        max_depth=MAX_DEPTH,
        allow_duplicate_keys=False,
        strict_hashable_types=True,
    )
    try:
        value = decoder.decode()
    except cbor2.CBORDecodeEOF:
        raise CBORError("unexpected EOF") from None
    except cbor2.CBORDecodeError as e:
        text = str(e)
        # A key that is no string: kube meets it while decoding into the type.
        raise CBORError(_message(text, data), late="map key must be" in text) from None
    extra = len(data) - stream.tell()
    if extra:
        raise CBORError(f"cbor: {extra} bytes of extraneous data starting at index {stream.tell()}")
    return _plain(value)


def _message(text: str, data: bytes) -> str:
    if "Duplicate map key" in text:
        found = _first_duplicate(data)
        if found is not None:
            key, index = found
            return f"cbor: found duplicate map key {_go_quote(key)} at map element index {index}"
    if "nesting depth" in text:
        return f"cbor: exceeded max nested level {MAX_DEPTH}"
    if "map key must be" in text:
        got = text.rsplit(" ", 1)[-1]
        kind = {"int": "positive integer", "frozendict": "map", "tuple": "array"}
        return f"cbor: cannot unmarshal {kind.get(got, 'primitives')} into Go value of type string"
    if "text string" in text or "utf-8" in text.lower():
        return "cbor: invalid UTF-8 string"
    return "cbor: " + text


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is bytes:
        return value.decode("utf-8", "replace")  # as Go's JSON renders a string's bad bytes
    if kind is float:
        if math.isnan(value):
            raise CBORError(_refused("primitives", "floating-point NaN"))
        if math.isinf(value):
            raise CBORError(_refused("primitives", "floating-point infinity"))
        return value
    if isinstance(value, Mapping):
        return _map(value)
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is cbor2.CBORTag:
        return _tag(value)
    number = 23 if value is cbor2.undefined else getattr(value, "value", "?")
    raise CBORError(_refused("primitives", f"simple value {number} is not recognized"), True)


def _map(value: Mapping[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for index, (key, item) in enumerate(value.items()):
        name = key.decode("utf-8", "replace") if type(key) is bytes else key
        if name in out:  # the same key once as text, once as bytes
            raise CBORError(
                f"cbor: found duplicate map key {_go_quote(name)} at map element index {index}"
            )
        out[name] = _plain(item)
    return out


def _tag(tagged: cbor2.CBORTag) -> Any:
    tag, content = tagged.tag, tagged.value
    if tag in (2, 3):
        raise CBORError(_refused("tag", "bignum"))
    if type(content) is bytes and tag in (21, 22, 23):
        if tag == 21:
            return base64.urlsafe_b64encode(content).rstrip(b"=").decode()
        if tag == 22:
            return base64.b64encode(content).decode()
        return content.hex()
    return _plain(content)


def _refused(cbor_type: str, what: str) -> str:
    return f"cbor: data item of cbor type {cbor_type} is not accepted by protocol: {what}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _first_duplicate(data: bytes) -> tuple[str, int] | None:
    """The first map key seen twice in its map, and its element index: kube names both,
    cbor2 only the key (a walk over the raw items, on this error path only)."""
    found: list[tuple[str, int]] = []
    with contextlib.suppress(IndexError, ValueError, _Found):
        _Walk(data, found).item(0)
    return found[0] if found else None


class _Found(Exception):
    pass


class _Walk:
    def __init__(self, data: bytes, found: list[tuple[str, int]]) -> None:
        self.data, self.pos, self.found = data, 0, found

    def _head(self) -> tuple[int, int | None]:
        first = self.data[self.pos]
        self.pos += 1
        major, info = first >> 5, first & 0x1F
        if info < 24:
            return major, info
        if info == 31:
            return major, None  # indefinite length
        size = 1 << (info - 24)
        arg = int.from_bytes(self.data[self.pos : self.pos + size], "big")
        self.pos += size
        return major, arg

    def item(self, depth: int) -> Any:
        """Skip one item; return its text if it is a string (a candidate key)."""
        if depth > MAX_DEPTH:
            raise ValueError
        major, arg = self._head()
        if major in (2, 3):
            return self._string(arg)
        if major == 4:
            self._each(arg, lambda: self.item(depth + 1))
        elif major == 5:
            self._map(arg, depth)
        elif major == 6:
            return self.item(depth + 1)
        return None

    def _string(self, size: int | None) -> str:
        if size is None:
            parts = []
            while self.data[self.pos] != 0xFF:
                _, chunk = self._head()
                parts.append(self._string(chunk))
            self.pos += 1
            return "".join(parts)
        text = self.data[self.pos : self.pos + size].decode("utf-8", "replace")
        self.pos += size
        return text

    def _each(self, count: int | None, step: Any) -> None:
        if count is None:
            while self.data[self.pos] != 0xFF:
                step()
            self.pos += 1
            return
        for _ in range(count):
            step()

    def _map(self, count: int | None, depth: int) -> None:
        seen: set[Any] = set()
        index = 0

        def pair() -> None:
            nonlocal index
            key = self.item(depth + 1)
            if key is not None and key in seen:
                self.found.append((key, index))
                raise _Found
            seen.add(key)
            self.item(depth + 1)
            index += 1

        self._each(count, pair)
