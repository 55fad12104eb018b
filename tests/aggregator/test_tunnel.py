"""The upgrade tunnel's parts: the request head it sends, and where a refused
upgrade's answer ends (Go's http.ReadResponse's rules)."""

from __future__ import annotations

import pytest
from twisted.web.http_headers import Headers
from twisted.web.test.requesthelper import DummyRequest

from platform_api.aggregator.tunnel import MAX_HEAD, BodyEnd, request_head

CHUNKED = b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n"


def _fed_bytewise(end: BodyEnd, body: bytes) -> int | None:
    """The index of the byte after which ``end`` said the body ended (None: never)."""
    for i in range(len(body)):
        if end.ended(body[i : i + 1]):
            return i + 1
    return None


def test_the_head_keeps_the_upgrade_and_sends_the_given_headers() -> None:
    request = DummyRequest([b""])
    request.method = b"POST"
    request.requestHeaders.setRawHeaders(b"Upgrade", [b"SPDY/3.1"])
    headers = Headers({b"X-Remote-User": [b"alice"], b"X-Stream-Protocol-Version": [b"v4"]})
    head = request_head(request, "/apis/g/v1/namespaces/n/things/t/exec?c=ls", "h:443", headers)
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /apis/g/v1/namespaces/n/things/t/exec?c=ls HTTP/1.1"
    assert set(lines[1:-2]) == {
        b"X-Remote-User: alice",
        b"X-Stream-Protocol-Version: v4",
        b"Host: h:443",
        b"Connection: Upgrade",
        b"Upgrade: SPDY/3.1",
    }
    assert head.endswith(b"\r\n\r\n")
    with_body = request_head(request, "/x", "h:443", headers, 5)
    assert b"\r\nContent-Length: 5\r\n" in with_body and with_body.endswith(b"\r\n\r\n")


@pytest.mark.parametrize(
    ("head", "body", "after"),
    [
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\n", b"hello", 5),
        (b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", b"x", 1),
        (CHUNKED, b"5\r\nhello\r\n0\r\n\r\n", 15),
        (CHUNKED, b"5;ext=1\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n", 29),
        (CHUNKED, b"2\r\n\r\n\r\n0\r\nX-Trailer: 1\r\n\r\n", 26),  # data that looks like CRLFs
        (CHUNKED, b"zz\r\n", 4),  # no chunk size: nothing more is this answer
    ],
    ids=["length", "no content", "chunked", "extensions", "trailers", "not chunked"],
)
def test_where_a_refused_upgrades_answer_ends(head: bytes, body: bytes, after: int) -> None:
    status = int(head.split(b" ")[1])
    assert _fed_bytewise(BodyEnd(status, head), body) == after
    assert BodyEnd(status, head).ended(body) is True  # all at once too


def test_an_answer_without_length_ends_with_its_connection() -> None:
    end = BodyEnd(400, b"HTTP/1.1 400 Bad Request\r\n\r\n")
    assert not end.ended(b"anything at all\r\n0\r\n\r\n")


def test_a_chunk_size_line_that_never_ends_is_no_answer() -> None:
    end = BodyEnd(400, CHUNKED)
    assert not end.ended(b"1" * 100)
    assert end.ended(b"1" * MAX_HEAD)
