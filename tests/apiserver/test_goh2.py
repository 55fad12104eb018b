"""HTTP/2 requests Go's server refuses: the stream alone, or its 400 (goh2.py); each
answer recorded from kube-apiserver v1.36 (the reference build) for the same frames."""

from __future__ import annotations

from typing import Any

import h2.events
import pytest
from twisted.internet.task import Clock
from twisted.web.resource import Resource

from platform_api.apiserver.goh2 import RESET, refusal
from platform_api.apiserver.webrequest import APIRequest
from tests.apiserver.test_httplimits import _h2

GET = [(b":method", b"GET"), (b":path", b"/version"), (b":scheme", b"https"), (b":authority", b"a")]


@pytest.mark.parametrize(
    ("headers", "ended", "answer"),
    [
        (GET, True, b""),
        ([*GET, (b"te", b"trailers"), (b"host", b"b"), (b"expect", b"fancy")], True, b""),
        ([(b":method", b"OPTIONS"), (b":path", b"*"), (b":scheme", b"http")], True, b""),
        ([(b":method", b"CONNECT"), (b":authority", b"a:443")], True, b""),
        (GET[1:], True, RESET),  # no method
        ([GET[0], *GET[2:]], True, RESET),  # no path
        ([*GET, (b"X-Up", b"v")], True, RESET),
        ([*GET, (b"x a", b"v")], True, RESET),
        ([*GET, (b"x-a", b"b\x01c")], True, RESET),
        ([GET[0], (b"x-a", b"b"), *GET[1:]], True, RESET),  # a pseudo-header after
        ([*GET, (b":foo", b"x")], True, RESET),
        ([*GET, (b":path", b"/x")], True, RESET),
        ([*GET, (b":protocol", b"websocket")], True, RESET),
        ([GET[0], (b":path", b""), *GET[2:]], True, RESET),
        ([GET[0], (b":path", b"version"), *GET[2:]], True, RESET),
        ([GET[0], (b":path", b"https://x/version"), *GET[2:]], True, RESET),
        ([GET[0], (b":path", b"/a%ZZ"), *GET[2:]], True, RESET),
        ([*GET[:2], (b":scheme", b"ftp"), GET[3]], True, RESET),
        ([*GET[:3], (b":authority", b"u@a")], True, RESET),
        ([(b":method", b"CONNECT"), (b":authority", b"a"), (b":path", b"/")], True, RESET),
        ([*GET, (b"content-length", b"5")], True, RESET),  # a body declared, none sent
        ([*GET, (b"content-length", b"5")], False, b""),
        ([*GET, (b"content-length", b"0")], True, b""),
        ([*GET, (b"content-length", b"x")], False, RESET),
        ([*GET, (b"content-length", b"-1")], False, RESET),
        ([*GET, (b"content-length", b"")], False, RESET),
        (
            [*GET, (b"connection", b"keep-alive")],
            True,
            b'request header "Connection" is not valid in HTTP/2\n',
        ),
        ([*GET, (b"upgrade", b"h2c")], True, b'request header "Upgrade" is not valid in HTTP/2\n'),
        ([*GET, (b"te", b"gzip")], True, b'request header "TE" may only be "trailers" in HTTP/2\n'),
    ],
)
def test_refusals(headers: list[tuple[bytes, bytes]], ended: bool, answer: bytes) -> None:
    assert refusal(headers, ended) == answer


class _Echo(Resource):
    isLeaf = True

    def render(self, request: Any) -> bytes:
        return b"%s %s" % (request.method, request.path)


def _exchange(*requests: list[tuple[str, str]]) -> list[Any]:
    clock = Clock()
    server, transport, client = _h2(clock, _Echo())
    server.requestFactory = APIRequest
    client.config.validate_outbound_headers = False  # sent as given, wrong ones too
    client.config.normalize_outbound_headers = False
    for i, headers in enumerate(requests):
        client.send_headers(1 + 2 * i, headers, end_stream=True)
    server.dataReceived(client.data_to_send())
    clock.advance(0)
    return client.receive_data(transport.value())


REQUEST = [(":method", "GET"), (":path", "/x"), (":scheme", "https"), (":authority", "a")]


def test_a_bad_stream_is_reset_and_the_connection_serves_the_others() -> None:
    events = _exchange([*REQUEST, ("X-Up", "v")], REQUEST)
    (reset,) = [e for e in events if isinstance(e, h2.events.StreamReset)]
    assert (reset.stream_id, reset.error_code) == (1, 1)
    (answer,) = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
    assert answer.stream_id == 3 and dict(answer.headers)[b":status"] == b"200"
    assert not any(isinstance(e, h2.events.ConnectionTerminated) for e in events)


def test_http_1_framing_is_go_s_400() -> None:
    events = _exchange([*REQUEST, ("connection", "keep-alive")])
    (answer,) = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
    body = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
    assert dict(answer.headers)[b":status"] == b"400"
    assert dict(answer.headers)[b"content-type"] == b"text/plain; charset=utf-8"
    assert dict(answer.headers)[b"x-content-type-options"] == b"nosniff"
    assert body == b'request header "Connection" is not valid in HTTP/2\n'


def test_connect_is_served_with_an_empty_path() -> None:
    """It has no :path, which crashed Twisted's request; Go serves it (kube: 404 page)."""
    events = _exchange([(":method", "CONNECT"), (":authority", "a:443")])
    body = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
    assert body == b"CONNECT "


class _Body(Resource):
    isLeaf = True

    def render(self, request: Any) -> bytes:
        problem = request.body_problem
        return problem.message.encode() if problem else request.content.getvalue()


def _post(length: str, body: bytes) -> list[Any]:
    clock = Clock()
    server, transport, client = _h2(clock, _Body())
    server.requestFactory = APIRequest
    headers = [(":method", "POST"), *REQUEST[1:], ("content-length", length)]
    client.send_headers(1, headers)
    client.send_data(1, body, end_stream=True)
    client.send_headers(3, REQUEST, end_stream=True)
    server.dataReceived(client.data_to_send())
    clock.advance(0)
    return client.receive_data(transport.value())


def test_a_body_shorter_than_declared_is_go_s_error_to_the_handler() -> None:
    events = _post("5", b"{}")
    bodies = {
        e.stream_id: e.data for e in events if isinstance(e, h2.events.DataReceived) and e.data
    }
    assert bodies[1] == b"request declared a Content-Length of 5 but only wrote 2 bytes"


def test_a_body_longer_than_declared_resets_its_stream_alone() -> None:
    events = _post("1", b"{}")
    (reset,) = [e for e in events if isinstance(e, h2.events.StreamReset)]
    assert (reset.stream_id, reset.error_code) == (1, 1)
    (answer,) = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
    assert answer.stream_id == 3
    assert not any(isinstance(e, h2.events.ConnectionTerminated) for e in events)


def test_a_body_as_declared_is_read() -> None:
    events = _post("2", b"{}")
    bodies = {
        e.stream_id: e.data for e in events if isinstance(e, h2.events.DataReceived) and e.data
    }
    assert bodies[1] == b"{}"
