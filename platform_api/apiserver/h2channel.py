"""The HTTP/2 side of the server's connections, as Go's server keeps them: the ALPN
switch to it, Go's header-list limit and idle timeout, and a request Go refuses refused
on its own stream (goh2.py), where the h2 library ended the whole connection.
"""

from __future__ import annotations

from typing import Any

from h2.errors import ErrorCodes
from h2.events import StreamReset
from h2.settings import SettingCodes
from twisted.web._http2 import H2Connection
from twisted.web.http import HTTPFactory, _GenericHTTPChannelProtocol

from platform_api.apiserver import goh2
from platform_api.apiserver.httplimits import MAX_HEADER_BYTES, MAX_HEADERS, APIChannel

# Go's HTTP/2 server advertises MaxHeaderBytes plus ten fields' worth of the HPACK
# per-field overhead (the h2 library's default is 64 KiB).
H2_HEADER_LIST_LIMIT = MAX_HEADER_BYTES + 10 * 32


class _ChannelSwitch(_GenericHTTPChannelProtocol):
    """Twisted's ALPN switch, giving an HTTP/2 connection Go's header-list limit before
    it reads the client's first frames (past it the connection ends, as with Go)."""

    def dataReceived(self, data: bytes) -> None:
        if self._negotiatedProtocol is None:
            http1: Any = self._channel
            super().dataReceived(b"")  # picks the channel for the negotiated protocol
            if self._negotiatedProtocol == b"h2":
                http1.stop_head_clock()  # HTTP/2 has its own idle timeout
                _widen_header_list(self._channel)
                GoIdleH2Connection.adopt(self._channel)
        super().dataReceived(data)


class GoIdleH2Connection(H2Connection):
    """Twisted's HTTP/2 connection with Go's idle timeout: the timer runs only while no
    stream is open, starting when the last one ends; no frame restarts it."""

    _idle_timeout: float | None = None
    _lengths: dict[int, list[int]]  # by stream: the body's declared length, and its bytes so far
    abortTimeout = 1  # Go closes 1 s after its GOAWAY (goAwayTimeout); Twisted waits 15

    @classmethod
    def adopt(cls, channel: H2Connection) -> None:
        """Give the connection Twisted's switch made (its class is Twisted's choice) this
        timing; it is idle so far (no stream yet), so its timer runs from now."""
        channel.__class__ = cls
        assert isinstance(channel, cls)
        channel.conn.config.validate_inbound_headers = False  # goh2.py judges requests
        channel._lengths = {}
        begin = channel.conn._begin_new_stream

        def begin_stream(stream_id: int, allowed_ids: Any) -> Any:
            """h2 (4.4.1, pinned) refuses a Content-Length it cannot read, or a body
            longer or shorter than one, for the whole connection; Go's rules are the
            channel's (goh2.py), so its streams do not check."""
            stream = begin(stream_id, allowed_ids)
            stream._initialize_content_length = _declared_elsewhere  # type: ignore[method-assign]
            return stream

        channel.conn._begin_new_stream = begin_stream  # type: ignore[method-assign]
        channel._idle_timeout = channel.timeOut
        channel.setTimeout(channel._idle_timeout)

    def resetTimeout(self) -> None:
        return None  # neither a frame received nor data sent restarts the idle timer

    def _requestReceived(self, event: Any) -> None:
        """A request whose header block Go refuses is refused on its stream alone (h2
        refused it for the whole connection); Go's answers before any handler's."""
        refusal = goh2.refusal(event.headers, event.stream_ended is not None)
        if refusal == goh2.RESET:
            self.conn.reset_stream(event.stream_id, ErrorCodes.PROTOCOL_ERROR)
            return
        connect = goh2.is_connect(event.headers)
        if connect:  # no :path, which Twisted needs: served with Go's empty one
            event.headers = [*event.headers, (b":path", b"/")]
        super()._requestReceived(event)
        self.setTimeout(None)  # a stream is open: not idle
        request = self.streams[event.stream_id]._request
        request.go_path_empty = connect
        declared = goh2.declared_length(event.headers)
        if declared is not None:
            self._lengths[event.stream_id] = [declared, 0]
        if len(event.headers) - connect > MAX_HEADERS:  # Go counts the pseudo-headers too
            request.too_many_fields = True
        elif refusal:
            request.h2_bad_request = refusal

    def _requestDataReceived(self, event: Any) -> None:
        length = self._lengths.get(event.stream_id)
        if length is not None:
            length[1] += len(event.data)
            if length[1] > length[0]:  # more than declared: Go resets the stream
                self._reset(event.stream_id)
        if event.stream_id in self.streams:
            super()._requestDataReceived(event)
        else:  # a refused stream's: only the connection's window is given back
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)

    def _requestEnded(self, event: Any) -> None:
        length = self._lengths.pop(event.stream_id, None)
        if event.stream_id not in self.streams:
            return
        if length is not None and length[1] < length[0]:  # what Go's body reader says
            self.streams[event.stream_id]._request.body_unreadable(goh2.short_body(*length))
        super()._requestEnded(event)

    def _requestAborted(self, event: Any) -> None:
        self._lengths.pop(event.stream_id, None)
        if event.stream_id in self.streams:
            super()._requestAborted(event)

    def _reset(self, stream_id: int) -> None:
        """A stream error: RST_STREAM PROTOCOL_ERROR, and its request ended."""
        code = ErrorCodes.PROTOCOL_ERROR
        self.conn.reset_stream(stream_id, code)
        self._requestAborted(StreamReset(stream_id=stream_id, error_code=code, remote_reset=False))

    def _requestDone(self, streamID: int) -> None:
        super()._requestDone(streamID)
        if not self.streams:
            self.setTimeout(self._idle_timeout)


def _declared_elsewhere(headers: Any) -> None:
    return None


def _widen_header_list(channel: Any) -> None:
    conn = channel.conn
    conn.decoder.max_header_list_size = H2_HEADER_LIST_LIMIT
    conn.update_settings({SettingCodes.MAX_HEADER_LIST_SIZE: H2_HEADER_LIST_LIMIT})
    channel.transport.write(conn.data_to_send())


def channel_protocol(factory: HTTPFactory) -> _GenericHTTPChannelProtocol:
    """``HTTPFactory.protocol``: the ALPN switch in front of our HTTP/1.1 channel."""
    return _ChannelSwitch(APIChannel())
