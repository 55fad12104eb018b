"""gRPC over one HTTP/2 connection, sans-IO: bytes in, calls' messages and endings out.

The etcd client's transport drives this from a Twisted protocol, and from a blocking socket
once at start-up (the first list, before the reactor runs).  It is the part of gRPC's wire
protocol etcd's KV and Watch services use: length-prefixed, uncompressed messages on one
stream per call, the status in the trailers (or a trailers-only response), flow control in
both directions, and RST_STREAM and GOAWAY as a call's or the connection's end.
"""

from __future__ import annotations

import contextlib
import struct
from dataclasses import dataclass
from urllib.parse import unquote

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

# Our receive windows: large, so a watch that falls behind never starves unary calls on
# the same connection (the connection's window reopens as bytes arrive; a paused stream's
# only when it is resumed).
STREAM_WINDOW = 8 * 1024 * 1024
CONNECTION_WINDOW = 64 * 1024 * 1024
_DEFAULT_WINDOW = 65535
_PREFIX = struct.Struct(">BI")  # compressed flag, message length

OK, CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE = 0, 1, 2, 4, 13, 14
# grpc-go's mapping of an RST_STREAM error code to a status code.
_RESET_CODES = {
    h2.errors.ErrorCodes.NO_ERROR: INTERNAL,
    h2.errors.ErrorCodes.REFUSED_STREAM: UNAVAILABLE,
    h2.errors.ErrorCodes.CANCEL: CANCELLED,
    h2.errors.ErrorCodes.ENHANCE_YOUR_CALM: 8,  # ResourceExhausted
    h2.errors.ErrorCodes.INADEQUATE_SECURITY: 7,  # PermissionDenied
}


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


class GrpcConnection:
    """One client connection's state; call ``data_to_send()`` after every other method."""

    def __init__(self, authority: str, scheme: str) -> None:
        self.authority = authority.encode()
        self.scheme = scheme.encode()
        # Headers are ours or etcd's and only three are read: h2's checks cost ~20% of a call.
        config = h2.config.H2Configuration(
            client_side=True,
            header_encoding=None,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
            validate_inbound_headers=False,
            normalize_inbound_headers=False,
        )
        self.h2 = h2.connection.H2Connection(config)
        self.h2.local_settings = h2.settings.Settings(
            client=True,
            initial_values={
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
            },
        )
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(CONNECTION_WINDOW - _DEFAULT_WINDOW)
        self.going_away = False  # GOAWAY received: no new calls here
        self._buffers: dict[int, bytearray] = {}
        self._headers: dict[int, dict[bytes, bytes]] = {}
        self._outgoing: dict[int, tuple[bytearray, bool]] = {}
        # Bytes read but not yet given back in a WINDOW_UPDATE: sent once half a window is
        # owed (most calls end first and cost no update), never while a stream is paused.
        self._owed: dict[int, int] = {}
        self._owed_connection = 0
        self._paused: set[int] = set()

    def data_to_send(self) -> bytes:
        return self.h2.data_to_send()

    def open(self, path: str, timeout: float | None = None) -> int:
        """Start a call; its stream id. Send its messages with ``send``."""
        stream_id = self.h2.get_next_available_stream_id()
        headers = [
            (b":method", b"POST"),
            (b":scheme", self.scheme),
            (b":path", path.encode()),
            (b":authority", self.authority),
            (b"content-type", b"application/grpc"),
            (b"te", b"trailers"),
        ]
        if timeout is not None:
            headers.append((b"grpc-timeout", b"%dm" % max(1, int(timeout * 1000))))
        self.h2.send_headers(stream_id, headers)
        self._buffers[stream_id] = bytearray()
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
        self._forget(stream_id)
        with contextlib.suppress(h2.exceptions.StreamClosedError):
            self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)

    def pause(self, stream_id: int) -> None:
        """Stop reopening a stream's window: its sender stops once the window is used up
        (a reader that falls behind holds etcd back instead of piling messages up)."""
        if stream_id in self._buffers:
            self._paused.add(stream_id)

    def resume(self, stream_id: int) -> None:
        self._paused.discard(stream_id)
        self._reopen(stream_id, 0, now=True)

    def _reopen(self, stream_id: int, size: int, *, now: bool = False) -> None:
        owed = self._owed.get(stream_id, 0) + size
        if stream_id in self._paused or (owed < STREAM_WINDOW // 2 and not now):
            self._owed[stream_id] = owed
            return
        self._owed.pop(stream_id, None)
        if owed:
            with contextlib.suppress(h2.exceptions.StreamClosedError):
                self.h2.increment_flow_control_window(owed, stream_id=stream_id)

    def ping(self, opaque: bytes) -> None:
        self.h2.ping(opaque)

    def receive(self, data: bytes) -> list[Message | Ended | h2.events.Event]:
        """What ``data`` brings: Messages and Endeds of calls, and the connection's own
        events the driver cares about (PingAckReceived, ConnectionTerminated)."""
        out: list[Message | Ended | h2.events.Event] = []
        for event in self.h2.receive_data(data):
            if isinstance(event, h2.events.DataReceived):
                self._data(event, out)
            elif isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                assert event.stream_id is not None
                self._headers.setdefault(event.stream_id, {}).update(event.headers or [])
            elif isinstance(event, h2.events.StreamEnded):
                assert event.stream_id is not None
                out.append(self._ended(event.stream_id))
            elif isinstance(event, h2.events.StreamReset):
                assert event.stream_id is not None
                if self._forget(event.stream_id):
                    code = _RESET_CODES.get(event.error_code, INTERNAL)  # type: ignore[call-overload]
                    out.append(Ended(event.stream_id, code, f"stream reset: {event.error_code}"))
            elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
                self._flush_all()
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.going_away = True
                out.append(event)
            elif isinstance(event, h2.events.PingAckReceived):
                out.append(event)
        return out

    def _data(
        self, event: h2.events.DataReceived, out: list[Message | Ended | h2.events.Event]
    ) -> None:
        stream_id, size = event.stream_id, event.flow_controlled_length or 0
        assert stream_id is not None
        self._owed_connection += size
        if self._owed_connection >= CONNECTION_WINDOW // 2:
            self.h2.increment_flow_control_window(self._owed_connection)
            self._owed_connection = 0
        buffer = self._buffers.get(stream_id)
        if buffer is None:
            return
        if size and event.stream_ended is None:
            self._reopen(stream_id, size)
        buffer += event.data or b""
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
        return self._buffers.pop(stream_id, None) is not None

    def _flush_all(self) -> None:
        for stream_id in list(self._outgoing):
            self._flush(stream_id)

    def _flush(self, stream_id: int) -> None:
        pending, end = self._outgoing[stream_id]
        while pending:
            window = self.h2.local_flow_control_window(stream_id)
            room = min(window, self.h2.max_outbound_frame_size)
            if room <= 0:
                return  # the rest goes when the peer's WINDOW_UPDATE comes
            chunk = bytes(pending[:room])
            del pending[:room]
            try:
                self.h2.send_data(stream_id, chunk, end_stream=end and not pending)
            except h2.exceptions.StreamClosedError:
                break  # the peer ended the call before reading it all (e.g. too large)
        del self._outgoing[stream_id]
