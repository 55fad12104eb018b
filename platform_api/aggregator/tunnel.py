"""Upgrade requests to an aggregated server (exec, attach, port-forward): kube's
UpgradeAwareHandler, as kube-aggregator's proxy uses it.

An HTTP client cannot carry a connection that stops being HTTP, so the request goes to
the aggregated server on a TLS connection of its own (the proxy certificate, the
APIService's trust), written as it came but with the caller's credentials replaced by
the front-proxy headers, and its ``Connection: Upgrade`` and ``Upgrade`` kept.  The
server's answer head goes back as written; after ``101 Switching Protocols`` the two
connections are joined byte for byte, each paced by the other, until either closes.
Any other answer is passed back whole and the client's connection closed, as kube's
handler does.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol, wrapClientTLS
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure
from twisted.web.http_headers import Headers
from twisted.web.server import Request

MAX_HEAD = 64 * 1024  # an answer head longer than this is no HTTP answer
CONNECT_TIMEOUT = 30.0  # Go's dialer (kube's proxy transport)


def request_head(
    request: Request, target: str, host: str, headers: Headers, length: int = 0
) -> bytes:
    """The request as the aggregated server gets it: ``headers`` (already without the
    caller's credentials), the upgrade headers the client sent, and its body's length."""
    out = headers.copy()
    out.setRawHeaders(b"Host", [host.encode("latin-1")])
    out.setRawHeaders(b"Connection", [b"Upgrade"])
    out.setRawHeaders(b"Upgrade", request.requestHeaders.getRawHeaders(b"upgrade") or [])
    if length:
        out.setRawHeaders(b"Content-Length", [b"%d" % length])
    lines = [b"%s %s HTTP/1.1" % (request.method, target.encode("latin-1"))]
    lines += [name + b": " + value for name, values in out.getAllRawHeaders() for value in values]
    return b"\r\n".join(lines) + b"\r\n\r\n"


class Upstream(Protocol):
    """The aggregated server's side: the head goes out, its answer comes back to the
    client; ``done`` fires with the answer's status code once either side closed."""

    def __init__(self, sent: bytes, request: Request) -> None:
        self.sent, self.request = sent, request
        self.client: Any = request.channel.transport
        self.link: Any = None  # this connection's transport, once made
        self.status = 0
        self._buffer = b""
        self._body: BodyEnd | None = None  # where a refused upgrade's answer ends
        self.done: Deferred[int] = Deferred()

    def connectionMade(self) -> None:
        self.link = self.transport
        self.link.write(self.sent)

    def dataReceived(self, data: bytes) -> None:
        if self.status == 101:
            self.client.write(data)
            return
        if self.status:
            self._pass(data)
            return
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD:
                self.link.abortConnection()
            return
        head, rest = self._buffer[: end + 4], self._buffer[end + 4 :]
        self._buffer = b""
        try:
            self.status = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            self.link.abortConnection()
            return
        self.request.code = self.status
        self.client.write(head)
        if self.status == 101:
            self._join()
            if rest:
                self.client.write(rest)
            return
        self._body = BodyEnd(self.status, head)
        self._pass(rest)

    def _join(self) -> None:
        """From now on the client's bytes go to the server, each side pacing the other."""
        channel: Any = self.request.channel
        channel.setTimeout(None)
        stop_head_clock = getattr(channel, "stop_head_clock", None)
        if stop_head_clock is not None:
            stop_head_clock()
        channel.dataReceived = self.link.write
        self.request.registerProducer(self.link, True)
        self.link.registerProducer(self.client, True)

    def _pass(self, data: bytes) -> None:
        """A refused upgrade's answer, whole, then the end of both connections."""
        if data:
            self.client.write(data)
        if self._body is not None and self._body.ended(data):
            self.link.abortConnection()  # passed on whole: this connection carries no more

    def connectionLost(self, reason: Failure | None = None) -> None:
        if self.status == 101:
            self.link.unregisterProducer()
            self.request.unregisterProducer()
        # the channel's: it takes itself off the connection as its producer first, or
        # TLS would wait for it before closing
        channel: Any = self.request.channel
        if channel is not None:
            channel.loseConnection()
        if not self.done.called:
            self.done.callback(self.status)


class BodyEnd:
    """Where an HTTP/1.1 answer's body ends, fed as it arrives: none for 1xx, 204 and
    304, its ``Content-Length``, its last chunk (and trailers), else the connection's
    end (as Go's ``http.ReadResponse`` reads it)."""

    def __init__(self, status: int, head: bytes) -> None:
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        self.left: int | None = None
        self.chunked = b"chunked" in fields.get(b"transfer-encoding", b"").lower()
        if 100 <= status < 200 or status in (204, 304):
            self.left = 0
        elif not self.chunked and fields.get(b"content-length", b"").isdigit():
            self.left = int(fields[b"content-length"])
        self._pending = b""
        self._chunk = 0  # bytes of the current chunk (and its CRLF) still to come
        self._trailers = False

    def ended(self, data: bytes) -> bool:
        if self.left is not None:
            self.left -= len(data)
            return self.left <= 0
        return self.chunked and self._chunks(data)

    def _chunks(self, data: bytes) -> bool:
        buffer, at = self._pending + data, 0
        while True:
            if self._chunk:
                step = min(self._chunk, len(buffer) - at)
                at, self._chunk = at + step, self._chunk - step
                if self._chunk:
                    break
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                break
            line, at = buffer[at:line_end], line_end + 2
            if self._trailers:
                if not line:
                    return True  # the empty line after the trailers
                continue
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                return True  # no chunk: nothing more can be read as this answer
            if size == 0:
                self._trailers = True
            else:
                self._chunk = size + 2  # its data and the CRLF after it
        self._pending = buffer[at:]
        return len(self._pending) > MAX_HEAD  # a size line that never ends: no HTTP


async def tunnel(reactor: Any, request: Request, address: Any, creator: Any, sent: bytes) -> int:
    """Open the connection to ``address``, send ``sent`` (the request) and relay until
    it ends; the answer's status (0: none came).  A connection that cannot be made
    raises, for the caller's 503."""
    endpoint = wrapClientTLS(
        creator, HostnameEndpoint(reactor, address.host, address.port, timeout=CONNECT_TIMEOUT)
    )
    upstream = Upstream(sent, request)
    await connectProtocol(endpoint, upstream)
    gone = request.notifyFinish()
    gone.addErrback(lambda _: upstream.link.loseConnection())
    return await upstream.done
