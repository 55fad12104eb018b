"""The HTTP/1.1 channel answers an over-long request head as Go's net/http does."""

from __future__ import annotations

import time

import pytest
from twisted.internet.interfaces import ISSLTransport
from twisted.internet.testing import StringTransport
from twisted.web.resource import Resource
from twisted.web.server import Site
from zope.interface import directlyProvides

from platform_api.apiserver.httplimits import (
    HEAD_LIMIT,
    MAX_HEADERS,
    TOO_LARGE_RESPONSE,
    APIChannel,
)


class _Hello(Resource):
    isLeaf = True

    def render_GET(self, request: object) -> bytes:
        return b"hello"


def _channel() -> tuple[APIChannel, StringTransport]:
    channel = APIChannel()
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
def test_many_headers_are_431_quickly(count: int) -> None:
    channel, transport = _channel()
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(count))
    started = time.monotonic()
    _feed(channel, b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n", chunk=65536)
    assert time.monotonic() - started < 1.0
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
