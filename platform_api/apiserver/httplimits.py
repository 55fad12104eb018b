"""Request-head limits of the HTTP/1.1 channel, as Go's net/http server applies them.

kube-apiserver's ``http.Server`` has ``MaxHeaderBytes`` 1 MiB; Go reads at most that
plus 4 KiB of slack for the request line and all header lines, has no limit of its
own on their number or on one line's length, and answers a head over the limit with
a plain-text 431 before closing the connection (here also past ``MAX_HEADERS`` header
lines, to keep one request's parsing well under a second).  Twisted's defaults are far smaller
(16 KiB per line and per head, 500 headers) and answer 400, or drop the connection
without a word when one line is too long; a long label selector in the URL must fit.
"""

from __future__ import annotations

from typing import Any

from h2.settings import SettingCodes
from twisted.web.http import HTTPChannel, HTTPFactory, _GenericHTTPChannelProtocol

MAX_HEADER_BYTES = 1 << 20  # kube's secure serving http.Server.MaxHeaderBytes
_READ_SLACK = 4096  # net/http's initialReadLimitSize adds this to MaxHeaderBytes
HEAD_LIMIT = MAX_HEADER_BYTES + _READ_SLACK
# Go has no limit on the count, but Twisted spends ~20 us on each header line, and a
# 1 MiB head holds 100k of them: more than this many are refused with the same 431.
MAX_HEADERS = 10000

TOO_LARGE = b"431 Request Header Fields Too Large"
# net/http's answer, byte for byte: status line, two headers, the status as the body.
TOO_LARGE_RESPONSE = (
    b"HTTP/1.1 " + TOO_LARGE + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n" + TOO_LARGE
)


class APIChannel(HTTPChannel):
    """An HTTP/1.1 channel with Go's head limit and answer."""

    MAX_LENGTH = HEAD_LIMIT
    totalHeadersSize = HEAD_LIMIT
    maxHeaders = MAX_HEADERS + 1  # ours answers first, with 431
    _head_bytes = 0
    _head_lines = 0
    _in_head = True
    _refused = False
    _secure: bool | None = None
    _host: Any = None
    _peer: Any = None

    def isSecure(self) -> bool:
        """Asked once per connection: Twisted adapts the transport to ISSLTransport on
        every call, and every request asks (Klein builds its URL with it)."""
        if self._secure is None:
            self._secure = bool(super().isSecure())
        return self._secure

    def getHost(self) -> Any:
        """Asked on every request (twisted.web's Request); a socket's local address does
        not change, but each answer was a getsockname call."""
        if self._host is None:
            self._host = super().getHost()
        return self._host

    def getPeer(self) -> Any:
        if self._peer is None:
            self._peer = super().getPeer()
        return self._peer

    def dataReceived(self, data: bytes) -> Any:
        if self._refused:
            return None  # answered and closing: the rest of the head is not read
        return super().dataReceived(data)

    def lineReceived(self, line: bytes) -> Any:
        if self._in_head:
            self._head_bytes += len(line) + 2  # Go counts the line ends too
            self._head_lines += bool(line)  # the request line, then each header line
            if self._head_bytes > HEAD_LIMIT or self._head_lines > MAX_HEADERS + 1:
                return self._too_large()
            if line == b"" and self._head_bytes > 2:
                self._in_head = False  # the head is complete; a body may follow
        return super().lineReceived(line)

    def lineLengthExceeded(self, line: bytes) -> Any:
        return self._too_large()

    def allContentReceived(self) -> None:
        self._head_bytes = self._head_lines = 0
        self._in_head = True  # the next pipelined request starts a new head
        super().allContentReceived()

    def _too_large(self) -> None:
        if self._refused:
            return
        self._refused = True
        if self.transport is not None:
            self.transport.write(TOO_LARGE_RESPONSE)
        self.loseConnection()


# Go's HTTP/2 server advertises MaxHeaderBytes plus ten fields' worth of the HPACK
# per-field overhead (the h2 library's default is 64 KiB).
H2_HEADER_LIST_LIMIT = MAX_HEADER_BYTES + 10 * 32


class _ChannelSwitch(_GenericHTTPChannelProtocol):
    """Twisted's ALPN switch, giving an HTTP/2 connection Go's header-list limit before
    it reads the client's first frames (past it the connection ends, as with Go)."""

    def dataReceived(self, data: bytes) -> None:
        if self._negotiatedProtocol is None:
            super().dataReceived(b"")  # picks the channel for the negotiated protocol
            if self._negotiatedProtocol == b"h2":
                _widen_header_list(self._channel)
        super().dataReceived(data)


def _widen_header_list(channel: Any) -> None:
    conn = channel.conn
    conn.decoder.max_header_list_size = H2_HEADER_LIST_LIMIT
    conn.update_settings({SettingCodes.MAX_HEADER_LIST_SIZE: H2_HEADER_LIST_LIMIT})
    channel.transport.write(conn.data_to_send())


def channel_protocol(factory: HTTPFactory) -> _GenericHTTPChannelProtocol:
    """``HTTPFactory.protocol``: the ALPN switch in front of our HTTP/1.1 channel."""
    return _ChannelSwitch(APIChannel())
