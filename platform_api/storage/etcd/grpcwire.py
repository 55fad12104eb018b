"""gRPC over one HTTP/2 connection, sans-IO: bytes in, calls' messages and endings out.

The etcd client's transport drives this from a Twisted protocol, and from a blocking socket
once at start-up (the first list, before the reactor runs).  It is the part of gRPC's wire
protocol etcd's KV and Watch services use: length-prefixed, uncompressed messages on one
stream per call, the status in the trailers (or a trailers-only response), flow control in
both directions, and RST_STREAM and GOAWAY as a call's or the connection's end.  The frames
themselves are in http2.py.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import unquote

from hpack import Decoder
from hpack.exceptions import HPACKError

from platform_api.storage.etcd import http2
from platform_api.storage.etcd.http2 import ProtocolError

# Our receive windows: large, so a watch that falls behind never starves unary calls on
# the same connection (the connection's window reopens as bytes arrive; a paused stream's
# only when it is resumed).
STREAM_WINDOW = 8 * 1024 * 1024
CONNECTION_WINDOW = 64 * 1024 * 1024
_PREFIX = struct.Struct(">BI")  # compressed flag, message length
_DECODED_KEPT = 64  # header blocks whose decoding is kept (see GrpcConnection._decode)

OK, CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE = 0, 1, 2, 4, 13, 14
# The codes as grpc-go's codes.Code.String() writes them, by number.
_CODE_NAMES = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
]
# grpc-go's mapping of an RST_STREAM error code to a status code.
_RESET_CODES = {
    http2.NO_ERROR: INTERNAL,
    http2.REFUSED_STREAM: UNAVAILABLE,
    http2.CANCEL: CANCELLED,
    http2.ENHANCE_YOUR_CALM: 8,  # ResourceExhausted
    http2.INADEQUATE_SECURITY: 7,  # PermissionDenied
}


def code_name(code: int) -> str:
    """A status code's name, as metrics and spans write it."""
    return _CODE_NAMES[code] if 0 <= code < len(_CODE_NAMES) else f"Code({code})"


@dataclass(frozen=True)
class Message:
    stream_id: int
    data: bytes


@dataclass(frozen=True)
class Ended:
    """A call is over: ``code`` 0 is success; otherwise gRPC's status code and message."""

    stream_id: int
    code: int
    message: str


@dataclass(frozen=True)
class PingAck:
    data: bytes


@dataclass(frozen=True)
class GoingAway:
    """GOAWAY: calls on streams above ``last_stream_id`` were not taken and may be retried."""

    last_stream_id: int
    error_code: int


Event: TypeAlias = Message | Ended | PingAck | GoingAway


class GrpcConnection:
    """One client connection's state; call ``data_to_send()`` after every other method."""

    def __init__(self, authority: str, scheme: str) -> None:
        # Pseudo-headers first (RFC 9113 8.3); the block of each path is made once.
        scheme_field = http2.SCHEME_HTTPS if scheme == "https" else http2.SCHEME_HTTP
        self._pseudo = http2.METHOD_POST + scheme_field
        self._regular = (
            http2.literal(http2.AUTHORITY, authority.encode())
            + http2.literal(http2.CONTENT_TYPE, b"application/grpc")
            + http2.literal(b"te", b"trailers")
        )
        # Header blocks by path and timeout: a client sends the same few (bounded below).
        self._blocks: dict[tuple[str, float | None], bytes] = {}
        self._out = bytearray(http2.PREFACE)
        self._out += http2.settings(
            {http2.ENABLE_PUSH: 0, http2.INITIAL_WINDOW_SIZE: STREAM_WINDOW}
        )
        self._out += http2.window_update(0, CONNECTION_WINDOW - http2.DEFAULT_WINDOW)
        self._in = bytearray()
        self._decoder = Decoder()
        self._decoded: dict[bytes, list[tuple[bytes, bytes]]] = {}
        self._next_stream = 1
        self.going_away = False  # GOAWAY received, or stream ids ran out: no new calls here
        self.greeted = False  # the peer's first SETTINGS arrived: its HTTP/2 side is up
        # The peer's windows for what we send, and its largest frame.
        self._peer_initial = http2.DEFAULT_WINDOW
        self._send_window = http2.DEFAULT_WINDOW
        self._max_frame = http2.DEFAULT_FRAME_SIZE
        self._windows: dict[int, int] = {}
        self._buffers: dict[int, bytearray] = {}  # open calls: what arrived of their messages
        self._headers: dict[int, dict[bytes, bytes]] = {}
        self._outgoing: dict[int, tuple[bytearray, bool]] = {}
        self._block: tuple[int, int, bytearray] | None = None  # headers awaiting CONTINUATION
        # Bytes read but not yet given back in a WINDOW_UPDATE: sent once half a window is
        # owed (most calls end first and cost no update), never while a stream is paused.
        self._owed: dict[int, int] = {}
        self._owed_connection = 0
        self._paused: set[int] = set()

    @property
    def pending(self) -> bool:
        """Whether there is anything for ``data_to_send`` (most reads owe the peer nothing)."""
        return bool(self._out)

    def data_to_send(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    # -- calls --------------------------------------------------------------------------------

    def open(self, path: str, timeout: float | None = None) -> int:
        """Start a call; its stream id. Send its messages with ``send``."""
        stream_id = self._next_stream
        self._next_stream += 2
        if self._next_stream > http2.LAST_STREAM_ID:
            self.going_away = True  # this call still fits; the next goes on a new connection
        block = self._blocks.get((path, timeout))
        if block is None:
            block = self._pseudo + http2.literal(http2.PATH, path.encode()) + self._regular
            if timeout is not None:
                block += http2.literal(b"grpc-timeout", b"%dm" % max(1, int(timeout * 1000)))
            if len(self._blocks) >= 64:
                self._blocks.clear()
            self._blocks[(path, timeout)] = block
        self._out += http2.frame(http2.HEADERS, http2.END_HEADERS, stream_id, block)
        self._buffers[stream_id] = bytearray()
        self._windows[stream_id] = self._peer_initial
        return stream_id

    def send(self, stream_id: int, message: bytes, *, end: bool = False) -> None:
        """Queue one message (and, with ``end``, the end of our side); sent as the peer's
        flow-control windows allow."""
        if stream_id not in self._buffers:
            return  # the call is over already: nobody reads an answer
        pending, _ = self._outgoing.get(stream_id, (bytearray(), False))
        pending += _PREFIX.pack(0, len(message)) + message
        self._outgoing[stream_id] = (pending, end)
        self._flush(stream_id)

    def cancel(self, stream_id: int) -> None:
        """End a call from our side (RST_STREAM CANCEL); no Ended follows for it."""
        if self._forget(stream_id):
            self._out += http2.frame(http2.RST_STREAM, 0, stream_id, http2.U32.pack(http2.CANCEL))

    def pause(self, stream_id: int) -> None:
        """Stop reopening a stream's window: its sender stops once the window is used up
        (a reader that falls behind holds etcd back instead of piling messages up)."""
        if stream_id in self._buffers:
            self._paused.add(stream_id)

    def resume(self, stream_id: int) -> None:
        self._paused.discard(stream_id)
        self._reopen(stream_id, 0, now=True)

    def ping(self, opaque: bytes) -> None:
        self._out += http2.frame(http2.PING, 0, 0, opaque)

    # -- what arrives -------------------------------------------------------------------------

    def receive(self, data: bytes) -> list[Event]:
        """What ``data`` brings: Messages and Endeds of calls, and the connection's own
        events the driver cares about (PingAck, GoingAway).  Raises ProtocolError."""
        out: list[Event] = []
        buffer = self._in
        buffer += data
        pos, size = 0, len(buffer)
        while size - pos >= 9:
            length_type, flags, stream_id = http2.HEAD.unpack_from(buffer, pos)
            length = length_type >> 8
            if length > http2.DEFAULT_FRAME_SIZE:
                raise ProtocolError(f"a {length}-byte frame is over the size we allow")
            end = pos + 9 + length
            if end > size:
                break
            payload = bytes(buffer[pos + 9 : end])
            pos = end
            self._frame(length_type & 0xFF, flags, stream_id & 0x7FFFFFFF, payload, out)
        del buffer[:pos]
        return out

    def _frame(
        self, type_: int, flags: int, stream_id: int, payload: bytes, out: list[Event]
    ) -> None:
        if self._block is not None and type_ != http2.CONTINUATION:
            raise ProtocolError("a header block was interrupted")
        if type_ == http2.DATA:
            self._data(flags, stream_id, payload, out)
        elif type_ == http2.HEADERS:
            if flags & http2.PADDED:
                payload = _unpad(payload)
            if flags & http2.PRIORITY_FLAG:
                payload = payload[5:]
            self._block = (stream_id, flags, bytearray(payload))
            if flags & http2.END_HEADERS:
                self._headers_done(out)
        elif type_ == http2.CONTINUATION:
            if self._block is None or self._block[0] != stream_id:
                raise ProtocolError("CONTINUATION without its HEADERS")
            self._block[2].extend(payload)
            if flags & http2.END_HEADERS:
                self._headers_done(out)
        elif type_ == http2.RST_STREAM:
            _expect(payload, 4, "RST_STREAM")
            code = http2.U32.unpack(payload)[0]
            if self._forget(stream_id):
                detail = f"stream reset: {http2.error_name(code)}"
                out.append(Ended(stream_id, _RESET_CODES.get(code, INTERNAL), detail))
        elif type_ == http2.SETTINGS:
            if not flags & http2.ACK:
                self._settings(payload)
        elif type_ == http2.PING:
            _expect(payload, 8, "PING")
            if flags & http2.ACK:
                out.append(PingAck(payload))
            else:
                self._out += http2.frame(http2.PING, http2.ACK, 0, payload)
        elif type_ == http2.GOAWAY:
            _expect(payload, 8, "GOAWAY")
            last, code = http2.GOAWAY_HEAD.unpack_from(payload)
            self.going_away = True
            out.append(GoingAway(last & 0x7FFFFFFF, code))
        elif type_ == http2.WINDOW_UPDATE:
            _expect(payload, 4, "WINDOW_UPDATE")
            self._window_update(stream_id, http2.U32.unpack(payload)[0] & 0x7FFFFFFF)
        elif type_ == http2.PUSH_PROMISE:
            raise ProtocolError("PUSH_PROMISE after we disabled push")
        # PRIORITY and frame types we do not know are ignored, as RFC 9113 asks.

    def _headers_done(self, out: list[Event]) -> None:
        assert self._block is not None
        stream_id, flags, block = self._block
        self._block = None
        fields = self._decode(bytes(block))  # even for a forgotten call: see _decode
        if stream_id not in self._buffers:
            return
        self._headers.setdefault(stream_id, {}).update(fields)
        if flags & http2.END_STREAM:
            out.append(self._ended(stream_id))

    def _decode(self, block: bytes) -> list[tuple[bytes, bytes]]:
        """A header block's fields.  Every block is decoded in order, so the decoder's table
        follows the peer's.  A block of indexed fields only leaves the table as it was and
        means the same until the table changes: once the server has sent its headers, every
        answer's are two such blocks, looked up here instead of decoded (~10 us each)."""
        kept = self._decoded.get(block)
        if kept is not None:
            return kept
        try:
            fields = [(bytes(n), bytes(v)) for n, v in self._decoder.decode(block, raw=True)]
        except HPACKError as e:
            raise ProtocolError(f"undecodable headers: {e}") from None
        if not http2.only_indexed(block):
            self._decoded.clear()  # the table may have changed under what was kept
        elif len(self._decoded) < _DECODED_KEPT:
            self._decoded[block] = fields
        return fields

    def _data(self, flags: int, stream_id: int, payload: bytes, out: list[Event]) -> None:
        size = len(payload)  # padding included: it counts against the windows
        if flags & http2.PADDED:
            payload = _unpad(payload)
        self._owed_connection += size
        if self._owed_connection >= CONNECTION_WINDOW // 2:
            self._out += http2.window_update(0, self._owed_connection)
            self._owed_connection = 0
        buffer = self._buffers.get(stream_id)
        if buffer is None:
            return
        ended = flags & http2.END_STREAM
        if size and not ended:
            self._reopen(stream_id, size)
        buffer += payload
        while len(buffer) >= _PREFIX.size:
            compressed, length = _PREFIX.unpack_from(buffer)
            if len(buffer) < _PREFIX.size + length:
                break
            data = bytes(buffer[_PREFIX.size : _PREFIX.size + length])
            del buffer[: _PREFIX.size + length]
            if compressed:  # never asked for (no grpc-accept-encoding): a broken peer
                self.cancel(stream_id)
                out.append(Ended(stream_id, INTERNAL, "compressed message not asked for"))
                return
            out.append(Message(stream_id, data))
        if ended:
            out.append(self._ended(stream_id))

    def _ended(self, stream_id: int) -> Ended:
        headers = self._headers.get(stream_id, {})
        self._forget(stream_id)
        status = headers.get(b":status", b"200")
        if status != b"200":
            code = UNAVAILABLE if status in (b"502", b"503", b"504") else UNKNOWN
            return Ended(stream_id, code, f"unexpected HTTP status {status.decode()}")
        raw = headers.get(b"grpc-status")
        if raw is None:
            return Ended(stream_id, INTERNAL, "the response has no grpc-status")
        message = unquote(headers.get(b"grpc-message", b"").decode("utf-8", "replace"))
        try:
            return Ended(stream_id, int(raw), message)
        except ValueError:
            return Ended(stream_id, UNKNOWN, f"malformed grpc-status {raw!r}")

    def _forget(self, stream_id: int) -> bool:
        self._headers.pop(stream_id, None)
        self._owed.pop(stream_id, None)
        self._paused.discard(stream_id)
        self._outgoing.pop(stream_id, None)
        self._windows.pop(stream_id, None)
        return self._buffers.pop(stream_id, None) is not None

    # -- flow control -------------------------------------------------------------------------

    def _settings(self, payload: bytes) -> None:
        if len(payload) % 6:
            raise ProtocolError("a SETTINGS frame of the wrong size")
        for offset in range(0, len(payload), 6):
            key, value = http2.SETTING.unpack_from(payload, offset)
            if key == http2.INITIAL_WINDOW_SIZE:
                if value > http2.MAX_WINDOW:
                    raise ProtocolError("an initial window over 2^31-1")
                delta, self._peer_initial = value - self._peer_initial, value
                for stream_id in self._windows:
                    self._windows[stream_id] += delta
            elif key == http2.MAX_FRAME_SIZE:
                self._max_frame = value
        self.greeted = True
        self._out += http2.frame(http2.SETTINGS, http2.ACK, 0)
        self._flush_all()

    def _window_update(self, stream_id: int, increment: int) -> None:
        if stream_id == 0:
            self._send_window += increment
        elif stream_id in self._windows:
            self._windows[stream_id] += increment
        self._flush_all()

    def _reopen(self, stream_id: int, size: int, *, now: bool = False) -> None:
        owed = self._owed.get(stream_id, 0) + size
        if stream_id in self._paused or (owed < STREAM_WINDOW // 2 and not now):
            self._owed[stream_id] = owed
            return
        self._owed.pop(stream_id, None)
        if owed and stream_id in self._buffers:
            self._out += http2.window_update(stream_id, owed)

    def _flush_all(self) -> None:
        for stream_id in list(self._outgoing):
            self._flush(stream_id)

    def _flush(self, stream_id: int) -> None:
        pending, end = self._outgoing[stream_id]
        while pending:
            room = min(self._windows[stream_id], self._send_window, self._max_frame)
            if room <= 0:
                return  # the rest goes when the peer's WINDOW_UPDATE comes
            chunk = bytes(pending[:room])
            del pending[:room]
            self._windows[stream_id] -= len(chunk)
            self._send_window -= len(chunk)
            flags = http2.END_STREAM if end and not pending else 0
            self._out += http2.frame(http2.DATA, flags, stream_id, chunk)
        del self._outgoing[stream_id]


def _unpad(payload: bytes) -> bytes:
    if not payload or payload[0] >= len(payload):
        raise ProtocolError("padding longer than its frame")
    return payload[1 : len(payload) - payload[0]]


def _expect(payload: bytes, size: int, what: str) -> None:
    if len(payload) < size:
        raise ProtocolError(f"a {what} frame of {len(payload)} bytes")
