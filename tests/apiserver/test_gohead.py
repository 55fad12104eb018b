"""Header lines as Go's net/http checks them (gohead.py, through the HTTP/1.1 channel);
every answer recorded from kube-apiserver v1.36 (the reference build) for the same head."""

from __future__ import annotations

import pytest
from twisted.internet.testing import StringTransport
from twisted.web.resource import Resource
from twisted.web.server import Site

from platform_api.apiserver.gohead import HeadFields
from platform_api.apiserver.httplimits import APIChannel, go_answer
from platform_api.apiserver.webrequest import APIRequest


class _Hello(Resource):
    isLeaf = True

    def render_GET(self, request: object) -> bytes:
        return b"hello"

    def render_POST(self, request: APIRequest) -> bytes:
        return b"read %d" % len(request.content.getvalue())


def _answer(head: bytes) -> bytes:
    channel = APIChannel()
    channel.site = Site(_Hello())
    channel.requestFactory = APIRequest
    channel.seconds_since_epoch = lambda: 0.0  # type: ignore[method-assign]
    transport = StringTransport()
    channel.makeConnection(transport)
    channel.dataReceived(head)
    return transport.value()


BAD = go_answer(b"400 Bad Request")
GET = b"GET /x HTTP/1.1\r\nHost: a\r\n"


@pytest.mark.parametrize(
    ("head", "answer"),
    [
        (GET + b"X A: b\r\n\r\n", go_answer(b"400 Bad Request: invalid header name")),
        (GET + b"X-A : b\r\n\r\n", go_answer(b"400 Bad Request: invalid header name")),
        (GET + b": b\r\n\r\n", BAD),
        (GET + b"X(A: b\r\n\r\n", BAD),
        (GET + b"X\xff: b\r\n\r\n", BAD),
        (GET + b"Bogus\r\n\r\n", BAD),
        (GET + b"X-A: b\x01c\r\n\r\n", BAD),
        (GET + b"X-A: b\x00c\r\n\r\n", BAD),
        (GET + b"X-A: b\x7fc\r\n\r\n", BAD),
        (b"GET /x HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", BAD),  # a CR inside a line
        (b"GET /x HTTP/1.1\r\n X-A: b\r\nHost: a\r\n\r\n", BAD),  # starts folded
        (GET + b"X-A: b\r\n  c\x01\r\n\r\n", BAD),  # a folded control byte
        (
            b"GET /x HTTP/1.1\r\nHost: a b\r\n\r\n",
            go_answer(b"400 Bad Request: malformed Host header"),
        ),
        (
            b"GET /x HTTP/1.1\r\nHost: a/b\r\n\r\n",
            go_answer(b"400 Bad Request: malformed Host header"),
        ),
        (
            b"GET /x HTTP/1.1\r\nHost: \xc3\xa9\r\n\r\n",
            go_answer(b"400 Bad Request: malformed Host header"),
        ),
        # the Host comes before the names
        (
            b"GET /x HTTP/1.1\r\nHost: a b\r\nX A: b\r\n\r\n",
            go_answer(b"400 Bad Request: malformed Host header"),
        ),
        (
            b"GET /x HTTP/1.1\r\nX A: b\r\n\r\n",
            go_answer(b"400 Bad Request: missing required Host header"),
        ),
        (GET + b"Content-Length: 9223372036854775808\r\n\r\n", BAD),
        (
            b"POST /x HTTP/1.1\r\nHost: a\r\nTrailer: X, Content-Length\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            BAD,
        ),
        (
            GET + b"Expect: fancy\r\n\r\n",
            b"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\n"
            b"Date: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n",
        ),
        (
            b"GET /x HTTP/1.0\r\nExpect: fancy\r\n\r\n",
            b"HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\n"
            b"Date: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n",
        ),
    ],
)
def test_heads_go_refuses(head: bytes, answer: bytes) -> None:
    assert _answer(head) == answer


@pytest.mark.parametrize(
    "head",
    [
        b"GET /x HTTP/1.1\nHost: a\nConnection: close\n\n",  # LF line ends
        GET + b"X-A: b\r\n  c\r\nConnection: close\r\n\r\n",  # folded
        GET + b"X-A: b\xffc\r\nConnection: close\r\n\r\n",  # a byte past ASCII
        GET + b"X-A: b\tc\r\nConnection: close\r\n\r\n",
        b"GET /x HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n",  # an empty Host
        b"GET /x HTTP/1.1\r\nHost: [::1]:6443\r\nConnection: close\r\n\r\n",
        GET + b"Expect: 100-Continue, x\r\nConnection: close\r\n\r\n",
        GET + b"Expect: x 100-continue\r\nConnection: close\r\n\r\n",
        GET + b"Expect:\r\nConnection: close\r\n\r\n",
        GET + b"Trailer: Content-Length\r\nConnection: close\r\n\r\n",  # no chunked body
    ],
)
def test_heads_go_serves(head: bytes) -> None:
    answer = _answer(head)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"hello")


def test_http_1_0_has_no_transfer_encoding() -> None:
    """Go drops it from an HTTP/1.0 request: the body is empty, whatever follows."""
    head = b"POST /x HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    answer = _answer(head)
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n") and answer.endswith(b"read 0")


def test_fields_keep_go_s_first_expect_and_every_host() -> None:
    fields = HeadFields()
    for line in (b"Host: a", b"Expect: 100-continue", b"Expect: fancy", b"host: b"):
        assert fields.line(line) == b""
    assert fields.hosts == [b"a", b"b"] and not fields.expectation_failed()
