"""The HTTP/1.1 channel answers an over-long request head, and times out a slow one or
an idle connection, as Go's net/http does."""

from __future__ import annotations

from typing import Any

import h2.config
import h2.connection
import h2.events
import pytest
from twisted.internet.interfaces import ISSLTransport
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.web._http2 import H2Connection
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site
from zope.interface import directlyProvides

from platform_api.apiserver.h2channel import GoIdleH2Connection
from platform_api.apiserver.httplimits import (
    BAD_REQUEST_RESPONSE,
    HEAD_LIMIT,
    IDLE_TIMEOUT,
    MAX_HEADERS,
    NO_HOST_RESPONSE,
    READ_HEADER_TIMEOUT,
    TOO_LARGE_RESPONSE,
    APIChannel,
)
from platform_api.apiserver.webrequest import APIRequest, APISite


class _Hello(Resource):
    isLeaf = True

    def render_GET(self, request: object) -> bytes:
        return b"hello"


def _channel(clock: Clock | None = None) -> tuple[APIChannel, StringTransport]:
    channel = APIChannel()
    if clock is not None:
        channel.callLater = clock.callLater  # type: ignore[method-assign]
        channel.seconds = clock.seconds  # type: ignore[method-assign]
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


def test_headers_up_to_the_limit_are_served() -> None:
    channel, transport = _channel()
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(MAX_HEADERS - 1))  # and Host
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


class _Held(Resource):
    """A response that ends when the test says (a watch with nothing to send)."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []

    def render_GET(self, request: Any) -> Any:
        self.requests.append(request)
        return NOT_DONE_YET


def _h2(clock: Clock, resource: Resource) -> tuple[GoIdleH2Connection, StringTransport, Any]:
    """A server HTTP/2 connection with Go's idle timing on a fake clock, and a client."""
    site = Site(resource)
    server = H2Connection(clock)
    server.site, server.requestFactory, server.timeOut = site, site.requestFactory, IDLE_TIMEOUT
    server.callLater = clock.callLater  # type: ignore[method-assign]
    transport = StringTransport()
    server.makeConnection(transport)
    GoIdleH2Connection.adopt(server)
    assert isinstance(server, GoIdleH2Connection)
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    server.dataReceived(client.data_to_send())
    return server, transport, client


def test_http2_pings_do_not_keep_an_idle_connection() -> None:
    """Go's idle timer runs while no stream is open and no frame restarts it (Twisted
    restarted it with every frame, so PINGs held an idle connection for ever)."""
    clock = Clock()
    server, transport, client = _h2(clock, _Hello())
    for _ in range(8):
        clock.advance(IDLE_TIMEOUT / 9)
        client.ping(b"12345678")
        server.dataReceived(client.data_to_send())
    assert not transport.disconnecting
    clock.advance(IDLE_TIMEOUT / 9)
    assert transport.disconnecting  # after its GOAWAY (NO_ERROR: nothing was open)
    events = client.receive_data(transport.value())
    assert [e.error_code for e in events if isinstance(e, h2.events.ConnectionTerminated)] == [0]


def test_an_http2_stream_with_nothing_to_send_is_not_timed_out() -> None:
    """A watch on HTTP/2 whose client sends nothing stays open (Twisted cut it at the
    timeout with a GOAWAY PROTOCOL_ERROR); the idle timer starts when it ends."""
    clock = Clock()
    held = _Held()
    server, transport, client = _h2(clock, held)
    headers = [(":method", "GET"), (":path", "/"), (":scheme", "https"), (":authority", "x")]
    client.send_headers(1, headers, end_stream=True)
    server.dataReceived(client.data_to_send())
    assert len(held.requests) == 1
    clock.advance(IDLE_TIMEOUT * 5)
    assert not transport.disconnecting
    held.requests[0].finish()
    clock.advance(IDLE_TIMEOUT - 1)
    assert not transport.disconnecting
    clock.advance(1)
    assert transport.disconnecting


def test_a_head_begun_while_the_last_ones_timer_runs_gets_its_own_32_seconds() -> None:
    """One timer per connection: when it comes due for a finished head, it waits on for
    the head begun since."""
    clock = Clock()
    channel, transport = _channel(clock)
    channel.dataReceived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # the first head, at 0
    clock.advance(10)
    channel.dataReceived(b"GET / HTTP/1.1\r\n")  # the next begins at 10
    clock.advance(READ_HEADER_TIMEOUT - 10)  # the timer set at 0 comes due
    assert not transport.disconnecting
    clock.advance(10 - 0.1)
    assert not transport.disconnecting
    clock.advance(0.1)
    assert transport.disconnecting


@pytest.mark.parametrize(
    ("head", "answer"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", NO_HOST_RESPONSE),  # HTTP/1.1 needs a Host
        (b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", BAD_REQUEST_RESPONSE),
        (b"GET / HTTP/1.1\r\nHOST: a\r\nX-A: v\r\nHost: a\r\n\r\n", BAD_REQUEST_RESPONSE),
    ],
)
def test_a_head_without_one_host_is_refused_as_go_refuses_it(head: bytes, answer: bytes) -> None:
    """net/http: HTTP/1.1 without Host is `400 Bad Request: missing required Host
    header`, two Host lines a plain 400 (recorded from the reference); Twisted took both."""
    channel, transport = _channel()
    channel.dataReceived(head)
    assert (transport.value(), transport.disconnecting) == (answer, True)


def test_http_1_0_needs_no_host() -> None:
    channel, transport = _channel()
    channel.dataReceived(b"GET / HTTP/1.0\r\n\r\n")
    assert transport.value().startswith(b"HTTP/1.0 200 OK")


@pytest.mark.parametrize(("extra", "status"), [(MAX_HEADERS - 4, "200"), (MAX_HEADERS - 3, "431")])
def test_http2_header_fields_past_go_s_count_are_its_431(extra: int, status: str) -> None:
    """Go counts the pseudo-headers too, and answers on the stream with its HTML 431."""
    clock = Clock()
    server, transport, client = _h2(clock, _Hello())
    server.requestFactory = APIRequest
    headers = [(":method", "GET"), (":path", "/"), (":scheme", "https"), (":authority", "x")]
    headers += [(f"x-h{i}", "v") for i in range(extra)]
    client.send_headers(1, headers, end_stream=True)
    server.dataReceived(client.data_to_send())
    clock.advance(0)  # Twisted's HTTP/2 sends data in its own turn
    events = client.receive_data(transport.value())
    (answer,) = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
    body = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
    assert dict(answer.headers)[b":status"].decode() == status
    if status == "431":
        assert dict(answer.headers)[b"content-type"] == b"text/html; charset=utf-8"
        assert body == b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"
    else:
        assert body == b"hello"
