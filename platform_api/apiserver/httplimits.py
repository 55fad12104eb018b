"""Request-head limits and timeouts of the HTTP/1.1 channel, as Go's net/http server
applies them.

kube-apiserver's ``http.Server`` has ``MaxHeaderBytes`` 1 MiB; Go reads at most that
plus 4 KiB of slack for the request line and all header lines, and no more than
``MAX_HEADERS`` header lines (Go 1.27's ``DefaultMaxHeaderValueCount``; over HTTP/2,
header fields, pseudo-headers included), has no limit on one line's length, and answers
a head over either limit with a plain-text 431 before closing the connection (over
HTTP/2, an HTML 431 on the stream).  Twisted's defaults are far smaller (16 KiB per
line and per head) and answer 400, or drop the connection without a word when one line
is too long; a long label selector in the URL must fit.

kube's server also gives a request head ``ReadHeaderTimeout`` (32 s, from the connection
or from the first byte of the next request) and a kept-alive connection ``IdleTimeout``
(90 s).  Twisted's only timeout is one of inactivity, reset by every byte, so a client
trickling a head a byte at a time held a connection for ever.  Over HTTP/2, Go's idle
timeout runs only while no stream is open, from when the last one ended, and no frame
restarts it; Twisted's restarted with every frame and ran while streams were open, so a
watch with nothing to send was cut at the timeout and PINGs kept an idle connection.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.protocol import connectionDone
from twisted.python.failure import Failure
from twisted.web.http import HTTPChannel, datetimeToString

from platform_api.apiserver import requestline
from platform_api.apiserver.gochunked import GoChunkedBody
from platform_api.apiserver.gohead import HeadFields

MAX_HEADER_BYTES = 1 << 20  # kube's secure serving http.Server.MaxHeaderBytes
_READ_SLACK = 4096  # net/http's initialReadLimitSize adds this to MaxHeaderBytes
HEAD_LIMIT = MAX_HEADER_BYTES + _READ_SLACK
MAX_HEADERS = 500  # net/http's DefaultMaxHeaderValueCount (Go 1.27, kube's reference)
READ_HEADER_TIMEOUT = 32.0  # kube's http.Server.ReadHeaderTimeout
IDLE_TIMEOUT = 90.0  # its IdleTimeout: the site's (Twisted's inactivity) timeout


EXPECTATION_FAILED = (
    b" 417 Expectation Failed\r\nConnection: close\r\nDate: %s\r\nContent-Length: 0\r\n\r\n"
)


def go_answer(status: bytes) -> bytes:
    """net/http's own answer, byte for byte: the status line, two headers, and the
    status again as the body."""
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Connection: close\r\n\r\n" + status
    )


TOO_LARGE_RESPONSE = go_answer(b"431 Request Header Fields Too Large")
BAD_REQUEST_RESPONSE = go_answer(b"400 Bad Request")
NO_HOST_RESPONSE = go_answer(b"400 Bad Request: missing required Host header")  # HTTP/1.1
# Any Transfer-Encoding but a lone ``chunked`` (``gzip``, ``identity``, two of them).
UNSUPPORTED_TE_RESPONSE = (
    b"HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\nUnsupported transfer encoding"
)


class APIChannel(HTTPChannel):
    """An HTTP/1.1 channel with Go's head limit and answer."""

    MAX_LENGTH = HEAD_LIMIT
    totalHeadersSize = HEAD_LIMIT
    delimiter = b"\n"  # Go's textproto ends a line at LF, a CR before it dropped
    maxHeaders = MAX_HEADERS + 1  # ours answers first, with 431
    _head_bytes = 0
    _head_lines = 0
    _in_head = True
    _refused = False
    _discarding = False  # a request served before its body's end: the rest is not read
    _secure: bool | None = None
    _host: Any = None
    _peer: Any = None
    _fields: HeadFields | None = None  # the header lines of the head being read
    _chunked = False  # the head being read named Transfer-Encoding: chunked
    _length_given: bytes | None = None  # and this Content-Length
    _head_clock: Any = None  # one DelayedCall per connection, not one per request
    _head_started: float | None = None  # when the head being read began
    seconds: Callable[[], float] = staticmethod(time.monotonic)  # a test's clock instead
    seconds_since_epoch: Callable[[], float] = staticmethod(time.time)  # for Date

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

    def connectionMade(self) -> None:
        super().connectionMade()
        self._head_begins()  # the TLS handshake and the first head

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.stop_head_clock()
        super().connectionLost(reason)

    def dataReceived(self, data: bytes) -> Any:
        if self._refused or self._discarding:
            return None  # answered and closing: the rest of the request is not read
        if self._in_head and self._head_started is None and not self._handlingRequest:
            self._head_begins()  # the next request on a kept-alive connection
        return super().dataReceived(data)

    def lineReceived(self, line: bytes) -> Any:
        if self._refused:
            return None  # lines of the same read after the refusal
        if self._in_head:
            self._head_bytes += len(line) + 1  # Go counts the line ends too
            if line.endswith(b"\r"):
                line = line[:-1]
            self._head_lines += bool(line)  # the request line, then each header line
            if self._head_bytes > HEAD_LIMIT or self._head_lines > MAX_HEADERS + 1:
                return self._too_large()
            if self._head_lines == 1 and line:
                try:
                    line, empty_path = requestline.as_go_reads(line)
                except requestline.Refused as e:
                    return self._refuse(go_answer(e.answer))
                if empty_path:
                    result = super().lineReceived(line)  # makes the request
                    if self.requests:
                        self.requests[-1].go_path_empty = True
                    return result
            if line and self._head_lines > 1:
                fields = self._fields = self._fields or HeadFields()
                refusal = fields.line(line)
                if refusal:
                    return self._refuse(go_answer(refusal))
            if line == b"" and self._head_lines:
                self._in_head = False  # the head is complete; a body may follow
                self._head_started = None
                refusal = self._head_refusal()
                if refusal:
                    return self._refuse(refusal)
        return super().lineReceived(line)

    def _head_refusal(self) -> bytes:
        """Go's answer to a whole head (b"" to serve it): its Host lines (more than one,
        none in HTTP/1.1), then what gohead.py judges, then its ``Expect``."""
        fields, self._fields = self._fields or HeadFields(), None
        version = getattr(self, "_version", b"")
        if len(fields.hosts) > 1:
            return BAD_REQUEST_RESPONSE
        if not fields.hosts and version == b"HTTP/1.1":
            return NO_HOST_RESPONSE
        refusal = fields.refusal(chunked=fields.chunked and version == b"HTTP/1.1")
        if refusal:
            return go_answer(refusal)
        if fields.expectation_failed():
            date = datetimeToString(self.seconds_since_epoch())
            return version + EXPECTATION_FAILED % date
        return b""

    def _head_begins(self) -> None:
        """Note the time; the connection's one timer, if none is due, comes back when this
        head's time is up (a timer per request cost ~5 us of each)."""
        self._head_started = self.seconds()
        if self._head_clock is None:
            self._head_clock = self.callLater(READ_HEADER_TIMEOUT, self._head_check)

    def stop_head_clock(self) -> None:
        self._head_started = None
        if self._head_clock is not None and self._head_clock.active():
            self._head_clock.cancel()
        self._head_clock = None

    def _head_check(self) -> None:
        self._head_clock = None
        if self._head_started is None:
            return  # between requests: the next head sets the timer again
        left = self._head_started + READ_HEADER_TIMEOUT - self.seconds()
        if left > 0:  # a later head than the one the timer was set for
            self._head_clock = self.callLater(left, self._head_check)
            return
        self._head_timed_out()

    def _head_timed_out(self) -> None:
        """Go takes what part of a line has come for the whole line: a malformed one is
        a 400; otherwise its next read times out and it closes without a word."""
        malformed = _malformed(self._buffer, request_line=self._head_lines == 0)
        self._refuse(BAD_REQUEST_RESPONSE if malformed else b"")

    def _refuse(self, answer: bytes) -> None:
        """Answer (if at all) and close: the rest of the connection is not read."""
        self.stop_head_clock()
        if self._refused or self.transport is None:
            return
        self._refused = True
        if answer:
            self.transport.write(answer)
        self.loseConnection()

    def lineLengthExceeded(self, line: bytes) -> Any:
        return self._too_large()

    def _respondToBadRequestAndDisconnect(self) -> None:
        """Twisted's refusals (a malformed line, Content-Length or chunk) in Go's words."""
        self._refuse(BAD_REQUEST_RESPONSE)

    def headerReceived(self, line: bytes) -> bool:
        """A name with a space passes Go's line reader and is refused once the head is
        read (gohead.py); Twisted would refuse it at once with its plain 400."""
        if b" " in line.partition(b":")[0]:
            return True
        return bool(super().headerReceived(line))

    def _maybeChooseTransferDecoder(self, header: bytes, data: bytes) -> bool:
        """Go's body framing: ``chunked`` is the one Transfer-Encoding (others are a 501)
        and wins over a Content-Length, which is dropped; a Content-Length repeated with
        the same value is one.  Twisted refuses both pairs.  A chunked body is read with
        Go's grammar (gochunked.py)."""
        if header == b"Transfer-Encoding":
            if getattr(self, "_version", b"") != b"HTTP/1.1":
                return True  # Go drops it from an HTTP/1.0 request (issue 12785)
            if data.lower() != b"chunked" or self._chunked:
                self._refuse(UNSUPPORTED_TE_RESPONSE)
                return False
            self._chunked, self._transferDecoder, self.length = True, None, None
            request = self.requests[-1]
            self._transferDecoder = GoChunkedBody(
                request.handleContentChunk, self._finishRequestBody, request.body_unreadable
            )
            return True
        if header == b"Content-Length":
            if data.isdigit() and int(data) >= 1 << 63:  # Go's ParseUint(cl, 10, 63)
                self._refuse(BAD_REQUEST_RESPONSE)
                return False
            if self._chunked or (data == self._length_given and data.isdigit()):
                return True
            self._length_given = data
        return bool(super()._maybeChooseTransferDecoder(header, data))

    def rawDataReceived(self, data: bytes) -> None:
        super().rawDataReceived(data)
        if self.requests and not self._handlingRequest:  # still reading this one's body
            request = self.requests[-1]
            if getattr(request, "body_problem", None) is not None:
                self._serve_unread(request)

    def _serve_unread(self, request: Any) -> None:
        """A body past the limit or unreadable: kube's handler would have met that while
        reading, so the request is served now, and, as Go's server does with a body it
        could not finish, the connection closes after the answer (what follows on the
        wire is no request); nothing more is read."""
        self._discarding = True
        self.persistent = False
        request.responseHeaders.setRawHeaders(b"connection", [b"close"])
        self._finishRequestBody(b"")

    def allContentReceived(self) -> None:
        self._chunked, self._length_given = False, None
        self._head_bytes = self._head_lines = 0
        self._in_head = True  # the next pipelined request starts a new head
        super().allContentReceived()

    def _too_large(self) -> None:
        self._refuse(TOO_LARGE_RESPONSE)


def _malformed(partial: bytes, *, request_line: bool) -> bool:
    """Whether Go's parser refuses ``partial`` taken as a whole line: a request line
    needs a method, a target and an HTTP version; a header line a colon."""
    if not partial:
        return False
    if not request_line:
        return b":" not in partial
    parts = partial.split(b" ", 2)
    return len(parts) < 3 or not re.fullmatch(rb"HTTP/\d\.\d", parts[2])
