"""Kube's Protobuf media type: ``application/vnd.kubernetes.protobuf`` (and ``...platform...``).

A body is the 4 bytes ``k8s\\0`` and a ``runtime.Unknown`` message: ``typeMeta`` (1:
``{apiVersion 1, kind 2}``), ``raw`` (2: the object's own message), ``contentEncoding``
(3) and ``contentType`` (4), both empty.  A watch stream (``;stream=watch``) is a
sequence of frames: a 4-byte big-endian length, then a ``metav1.WatchEvent`` message
``{type 1, object 2: RawExtension{raw 1}}`` without prefix or envelope, whose raw bytes
are the object encoded as a whole body (prefix and envelope included).

Objects stay JSON-shaped dicts on this side; ``apiVersion`` travels as this server
writes it (``*.platform.io`` groups), and the message of a kind is found under the
upstream group.  Kube has no message for ``Table`` (it negotiates Tables as JSON or YAML
only) nor for custom resources: ``supports`` says which kinds can be sent.
"""

from __future__ import annotations

from typing import Any

from platform_api.codec.protobuf_decode import decoder
from platform_api.codec.protobuf_encode import encoder
from platform_api.codec.protobuf_schema import fields, message_for, supports
from platform_api.codec.protobuf_special import raw_json
from platform_api.codec.protobuf_values import varint
from platform_api.codec.protobuf_wire import EOF, WireError, fields_of, len_field, split_envelope
from platform_api.validation.field import go_quote

__all__ = [
    "BRANDED_MEDIA_TYPE",
    "MEDIA_TYPE",
    "MEDIA_TYPES",
    "PREFIX",
    "FrameReader",
    "NotRegisteredError",
    "ProtobufError",
    "decode",
    "decode_watch_event",
    "encode",
    "encode_list",
    "encode_message",
    "encode_watch_event",
    "envelope",
    "read_frames",
    "supports",
]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
BRANDED_MEDIA_TYPE = "application/vnd.platform.protobuf"
MEDIA_TYPES = (MEDIA_TYPE, BRANDED_MEDIA_TYPE)
PREFIX = b"k8s\x00"
MAX_FRAME = 16 * 1024 * 1024  # kube's streaming decoder refuses larger objects
# kube's scheme name, as its "not registered" errors print it.
SCHEME = "pkg/api/legacyscheme/scheme.go:30"
# This server's refusal of a body nested past what its stages can take (codec.bounds).
NESTED = "proto: message nested too deeply"


class ProtobufError(ValueError):
    """A body that cannot be encoded or decoded; the text follows kube's where it has one.
    ``typed``: the (apiVersion, kind) its envelope gave, when it failed after reading it
    (kube then names that type in its answer)."""

    typed: tuple[str, str] | None = None


class NotRegisteredError(ProtobufError):
    """No Protobuf message for this kind (custom resources, ``Table``...)."""

    def __init__(self, api_version: str, kind: str, scheme: str = SCHEME) -> None:
        super().__init__(
            f"no kind {go_quote(kind)} is registered for version {go_quote(api_version)} "
            f"in scheme {go_quote(scheme)}"
        )
        self.api_version = api_version
        self.kind = kind


def _field(number: int, payload: bytes | bytearray) -> bytes:
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def encode(obj: dict[str, Any]) -> bytes:
    """A whole body: prefix, envelope, and the object's message (type from its own TypeMeta)."""
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    return envelope(api_version, kind, encode_message(api_version, kind, obj))


def encode_message(api_version: str, kind: str, obj: dict[str, Any]) -> bytes:
    """The object's own message (no envelope): what a list or a cache holds per object."""
    message = message_for(api_version, kind)
    if message is None:
        raise NotRegisteredError(api_version, kind)
    try:
        return bytes(encoder(message)(obj))
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        raise ProtobufError(f"cannot encode {kind} as Protobuf: {e}") from None
    except RecursionError:
        raise ProtobufError(f"cannot encode {kind} as Protobuf: nested too deeply") from None


def as_field_two(message: bytes) -> bytes:
    """A message framed as field 2: the ``raw`` of an envelope and an ``items`` element of
    every list message alike, so one framed copy serves a GET and every LIST."""
    return _field(2, message)


def envelope(api_version: str, kind: str, message: bytes) -> bytes:
    """A whole body around an encoded message: the type travels in the envelope only,
    so one message serves every group name a client may ask in."""
    return framed_envelope(api_version, kind, _field(2, message))


def framed_envelope(api_version: str, kind: str, framed: bytes) -> bytes:
    """``envelope`` of a message already framed by ``as_field_two``."""
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return b"".join((PREFIX, _field(1, type_meta), framed, b"\x1a\x00\x22\x00"))


def encode_list(
    api_version: str, list_kind: str, list_meta: dict[str, Any], framed_items: list[bytes]
) -> bytes:
    """A whole list body from its ListMeta and its items' messages, each already framed
    by ``as_field_two`` (kube's list messages all hold their items in field 2)."""
    message = message_for(api_version, list_kind)
    if message is None:
        raise NotRegisteredError(api_version, list_kind)
    numbers = {f.json: f for f in fields(message)}
    meta_field, items_field = numbers["metadata"], numbers["items"]
    if items_field.number != 2:
        raise ProtobufError(f"{list_kind} keeps its items in field {items_field.number}")
    head = _field(meta_field.number, encoder(meta_field.ref)(list_meta))
    return envelope(api_version, list_kind, head + b"".join(framed_items))


def _missing(what: str, api_version: str, kind: str) -> ProtobufError:
    meta = f"runtime.TypeMeta{{APIVersion:{go_quote(api_version)}, Kind:{go_quote(kind)}}}"
    return ProtobufError(f"Object '{what}' is missing in '{meta}'")


def decode(data: bytes, default_api_version: str = "", default_kind: str = "") -> dict[str, Any]:
    """A whole body -> the object as JSON, ``kind`` and ``apiVersion`` first.

    The defaults (the request URL's type) fill in a kind or version the envelope lacks,
    as kube does.
    """
    if not data:
        raise ProtobufError("empty data")
    if data[:4] != PREFIX:
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        )
    if len(data) == 4:
        raise ProtobufError("empty body")
    try:
        api_version, kind, raw = split_envelope(data)
    except (IndexError, WireError, RecursionError) as e:
        raise _wire_problem(e) from None
    if not kind:
        kind = default_kind
    if not _version_of(api_version) and default_api_version:
        api_version = default_api_version
    if not kind:
        raise _missing("Kind", api_version, kind)
    try:
        if not api_version:
            raise _missing("apiVersion", api_version, kind)
        message = message_for(api_version, kind)
        if message is None:
            raise NotRegisteredError(api_version, kind)
        obj = decoder(message)(raw, 0, len(raw))
    except RecursionError:  # this server's own bound (codec.bounds): no type named
        raise ProtobufError(NESTED) from None
    except (IndexError, WireError, ProtobufError) as e:
        problem = e if isinstance(e, ProtobufError) else _wire_problem(e)
        problem.typed = (api_version, kind)
        raise problem from None
    return {"kind": kind, "apiVersion": api_version, **obj}


def _version_of(api_version: str) -> str:
    """The version Go's ParseGroupVersion reads: none from ``apps/`` or ``a/b/c``."""
    group, slash, version = api_version.partition("/")
    return "" if "/" in version else version if slash else group


def _wire_problem(e: Exception) -> ProtobufError:
    if isinstance(e, IndexError):
        return ProtobufError(EOF)
    if isinstance(e, RecursionError):
        return ProtobufError(NESTED)
    return ProtobufError(str(e))


def encode_watch_event(event_type: str, obj: dict[str, Any] | bytes) -> bytes:
    """One frame of a ``;stream=watch`` response; ``obj`` may be an ``encode`` result."""
    raw = obj if isinstance(obj, bytes) else encode(obj)
    event = _field(1, event_type.encode()) + _field(2, _field(1, raw))
    return len(event).to_bytes(4, "big") + event


def decode_watch_event(frame: bytes) -> tuple[str, Any]:
    """A frame's payload (without its length) -> (type, object as JSON)."""
    try:
        event = fields_of(frame, 0, len(frame))
        event_type = len_field(event, 1, "Type").decode("utf-8", "replace")
        extension = len_field(event, 2, "Object")
        raw = len_field(fields_of(extension, 0, len(extension)), 1, "Raw")
        if raw[:4] == PREFIX:
            return event_type, decode(raw)
        return event_type, raw_json(raw, decoder)
    except IndexError:
        raise ProtobufError(EOF) from None
    except WireError as e:
        raise ProtobufError(str(e)) from None


class FrameReader:
    """Splits a watch stream into frames as bytes arrive (for tests and clients)."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buffer = bytearray()
        self._max = max_frame

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; return the frames they complete."""
        self._buffer += data
        frames = []
        buffer = self._buffer
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if size > self._max:
                raise ProtobufError("object to decode was longer than maximum allowed size")
            if len(buffer) < 4 + size:
                break
            frames.append(bytes(buffer[4 : 4 + size]))
            del buffer[: 4 + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered."""
        return len(self._buffer)


def read_frames(stream: bytes) -> list[bytes]:
    """Every frame of a complete stream; a cut-off last frame is an error."""
    reader = FrameReader()
    frames = reader.feed(stream)
    if reader.pending:
        raise ProtobufError(EOF)
    return frames
