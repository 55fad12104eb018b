"""The HTTP/1.1 channel answers an over-long request head, and times out a slow one or
an idle connection, as Go's net/http does."""

from __future__ import annotations

import pytest
from twisted.internet.interfaces import ISSLTransport
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.web.resource import Resource
from twisted.web.server import Site
from zope.interface import directlyProvides

from platform_api.apiserver.httplimits import (
    BAD_REQUEST_RESPONSE,
    HEAD_LIMIT,
    IDLE_TIMEOUT,
    MAX_HEADERS,
    READ_HEADER_TIMEOUT,
    TOO_LARGE_RESPONSE,
    APIChannel,
)
from platform_api.apiserver.site import APISite


class _Hello(Resource):
    isLeaf = True

    def render_GET(self, request: object) -> bytes:
        return b"hello"


def _channel(clock: Clock | None = None) -> tuple[APIChannel, StringTransport]:
    channel = APIChannel()
    if clock is not None:
        channel.callLater = clock.callLater  # type: ignore[method-assign]
        channel.timeOut = IDLE_TIMEOUT
    channel.site = Site(_Hello())
    channel.requestFactory = channel.site.requestFactory
    transport = StringTransport()
    channel.makeConnection(transport)
    return channel, transport


def _feed(channel: APIChannel, data: bytes, chunk: int = 16384) -> None:
    for i in range(0, len(data), chunk):
        channel.dataReceived(data[i : i + chunk])


def test_long_url_within_the_limit_is_served() -> None:
    channel, transport = _channel()
    path = b"/?q=" + b"a" * (1 << 20)
    _feed(channel, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.value().startswith(b"HTTP/1.1 200 OK")
    assert transport.value().endswith(b"hello")


def test_request_line_over_the_limit_is_431() -> None:
    channel, transport = _channel()
    _feed(channel, b"GET /?q=" + b"a" * HEAD_LIMIT + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.value() == TOO_LARGE_RESPONSE
    assert transport.disconnecting


@pytest.mark.parametrize("count", [MAX_HEADERS + 1, 120000])  # 120000: over 1 MiB too
def test_many_headers_are_431(count: int) -> None:
    channel, transport = _channel()
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(count))
    _feed(channel, b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n", chunk=65536)
    assert transport.value() == TOO_LARGE_RESPONSE


def test_thousands_of_headers_within_the_limit_are_served() -> None:
    channel, transport = _channel()
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(MAX_HEADERS - 1))  # Twisted: 500
    _feed(channel, b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    assert transport.value().startswith(b"HTTP/1.1 200 OK")


def test_the_limit_counts_each_request_of_a_connection_afresh() -> None:
    channel, transport = _channel()
    one = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (HEAD_LIMIT // 2) + b"\r\n\r\n"
    _feed(channel, one)
    _feed(channel, one)
    assert transport.value().count(b"HTTP/1.1 200 OK") == 2


def test_is_secure_follows_the_transport() -> None:
    plain, _ = _channel()
    assert plain.isSecure() is False and plain.isSecure() is False
    tls, transport = _channel()
    directlyProvides(transport, ISSLTransport)
    assert tls.isSecure() is True and tls.isSecure() is True


@pytest.mark.parametrize(
    ("sent", "answer"),
    [
        (b"", b""),  # no request at all (nor a TLS handshake): closed without a word
        (b"GET /livez HTTP/1.1\r\nHost: x\r\n", b""),  # a head that stopped
        (b"GET /liv", BAD_REQUEST_RESPONSE),  # Go parses the part as the line: malformed
        (b"GET / HTTP/1.1", b""),  # ... a whole request line, read on: times out
        (b"GET / HTTP/1.1\r\nX-Sl", BAD_REQUEST_RESPONSE),  # a header line with no colon
        (b"GET / HTTP/1.1\r\nX-Slow: a", b""),
    ],
)
def test_a_head_not_complete_in_32_seconds_ends_the_connection(sent: bytes, answer: bytes) -> None:
    """kube's ReadHeaderTimeout: a client trickling its head a byte at a time does not
    hold the connection (Twisted's inactivity timeout restarts with every byte)."""
    clock = Clock()
    channel, transport = _channel(clock)
    for i in range(len(sent)):
        clock.advance(READ_HEADER_TIMEOUT / (len(sent) + 1))
        channel.dataReceived(sent[i : i + 1])
    assert not transport.disconnecting
    clock.advance(READ_HEADER_TIMEOUT)
    assert (transport.value(), transport.disconnecting) == (answer, True)


def test_each_request_of_a_kept_alive_connection_has_its_own_head_time() -> None:
    clock = Clock()
    channel, transport = _channel(clock)
    clock.advance(READ_HEADER_TIMEOUT - 1)
    channel.dataReceived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.value().startswith(b"HTTP/1.1 200 OK")
    clock.advance(IDLE_TIMEOUT - 1)  # idle, within kube's idle timeout
    channel.dataReceived(b"GET / HTTP/1.1\r\n")  # the next head starts its clock
    clock.advance(READ_HEADER_TIMEOUT - 1)
    assert not transport.disconnecting
    clock.advance(1)
    assert transport.disconnecting


def test_a_kept_alive_connection_idle_for_90_seconds_is_closed() -> None:
    clock = Clock()
    channel, transport = _channel(clock)
    channel.dataReceived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    clock.advance(IDLE_TIMEOUT - 1)
    assert not transport.disconnecting
    clock.advance(1)
    assert transport.disconnecting
    assert APISite(_Hello()).timeOut == IDLE_TIMEOUT  # the server's channels have it
