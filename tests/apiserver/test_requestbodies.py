"""A request body as kube's server reads it: a handler meets a body past the limit
(413) or one Go's chunked reader cannot read (its message, a 500) where it reads the
body, the request is served at once, and the connection closes after the answer."""

from __future__ import annotations

from typing import Any

from twisted.internet.testing import StringTransport
from twisted.web.resource import Resource
from twisted.web.server import Site

from platform_api.apiserver.httplimits import APIChannel
from platform_api.apiserver.webrequest import MAX_BODY, APIRequest


class _Echo(Resource):
    """Answers a POST with what reading its body met, and a GET without reading it."""

    isLeaf = True

    def render_POST(self, request: Any) -> bytes:
        problem = request.body_problem
        if problem is not None:
            request.setResponseCode(problem.code)
            return f"{problem.reason}|{problem.message}".encode()
        return b"read %d" % len(request.content.getvalue())

    def render_GET(self, request: Any) -> bytes:
        return b"listed"


def _channel() -> tuple[APIChannel, StringTransport]:
    channel = APIChannel()
    channel.site = Site(_Echo())
    channel.requestFactory = APIRequest
    transport = StringTransport()
    channel.makeConnection(transport)
    return channel, transport


def _head(method: bytes, framing: bytes) -> bytes:
    return method + b" /x HTTP/1.1\r\nHost: a\r\n" + framing + b"\r\n"


CHUNKED = b"Transfer-Encoding: chunked\r\n"
NEXT = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"


def _answers(transport: StringTransport) -> list[bytes]:
    return transport.value().split(b"HTTP/1.1 ")[1:]


def test_a_chunked_body_go_cannot_read_is_its_500_and_the_connection_closes() -> None:
    channel, transport = _channel()
    channel.dataReceived(_head(b"POST", CHUNKED) + b"2\r\n{}\r\nzz\r\n" + NEXT)
    (answer,) = _answers(transport)
    assert answer.startswith(b"500 ")
    assert b"\r\nconnection: close\r\n" in answer.lower()
    assert answer.endswith(b"\r\n\r\n|invalid byte in chunk length")
    assert transport.disconnecting
    channel.dataReceived(NEXT)  # nothing after the bad body is read as a request
    assert len(_answers(transport)) == 1


def test_a_get_with_an_unreadable_body_is_served() -> None:
    channel, transport = _channel()
    channel.dataReceived(_head(b"GET", CHUNKED) + b"zz\r\n")
    (answer,) = _answers(transport)
    assert answer.startswith(b"200 ") and answer.endswith(b"listed")
    assert b"\r\nconnection: close\r\n" in answer.lower() and transport.disconnecting


def test_a_body_past_the_limit_is_answered_before_the_rest_arrives() -> None:
    """kube reads the limit and one byte more, then answers 413; the rest (here 5 MiB
    more) is never read."""
    for framing in (b"Content-Length: %d\r\n" % (8 << 20), CHUNKED):
        channel, transport = _channel()
        channel.dataReceived(_head(b"POST", framing))
        piece = b"x" * 65536
        sent = 0
        while not transport.value() and sent < 8 << 20:
            channel.dataReceived(piece if framing != CHUNKED else b"10000\r\n" + piece + b"\r\n")
            sent += len(piece)
        assert MAX_BODY < sent <= MAX_BODY + len(piece)
        (answer,) = _answers(transport)
        assert answer.startswith(b"413 ")
        assert answer.endswith(
            b"\r\n\r\nRequestEntityTooLarge|Request entity too large: limit is 3145728"
        )
        assert transport.disconnecting


def test_a_body_at_the_limit_is_read_and_the_connection_kept() -> None:
    channel, transport = _channel()
    channel.dataReceived(_head(b"POST", b"Content-Length: %d\r\n" % MAX_BODY) + b"x" * MAX_BODY)
    (answer,) = _answers(transport)
    assert answer.startswith(b"200 ") and answer.endswith(b"read %d" % MAX_BODY)
    assert b"connection: close" not in answer.lower() and not transport.disconnecting
    channel.dataReceived(NEXT)
    assert len(_answers(transport)) == 2


def test_a_chunked_body_read_whole_keeps_the_connection() -> None:
    channel, transport = _channel()
    body = b"2\r\n{}\r\n3;ext\r\nabc\r\n0\r\nX-Trailer: y\r\n\r\n"
    channel.dataReceived(_head(b"POST", CHUNKED) + body + NEXT)
    first, second = _answers(transport)
    assert first.startswith(b"200 ") and first.endswith(b"read 5")
    assert second.startswith(b"200 ") and second.endswith(b"listed")
    assert not transport.disconnecting
