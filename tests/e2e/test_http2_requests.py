"""HTTP/2 requests Go's server refuses, against the real server: a malformed one is
reset on its own stream and the connection's other streams are served; HTTP/1 framing
headers get Go's 400; a CONNECT (no :path) gets kube's 404 page.  Recorded from
kube-apiserver v1.36 (the reference build) for the same frames."""

from __future__ import annotations

import json
import socket
from typing import Any

import h2.config
import h2.connection
import h2.events

from tests.e2e.conftest import Server

GET = [(":method", "GET"), (":path", "/version"), (":scheme", "https"), (":authority", "a")]


def _streams(server: Server, *requests: list[tuple[str, str]]) -> list[Any]:
    """Each request on its own stream of one connection, sent as given; the events."""
    context = server.ssl_context
    context.check_hostname = False
    context.set_alpn_protocols(["h2"])
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    config = h2.config.H2Configuration(
        client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False
    )
    conn = h2.connection.H2Connection(config)
    events: list[Any] = []
    with context.wrap_socket(socket.create_connection((host, port)), server_hostname=host) as tls:
        conn.initiate_connection()
        for i, headers in enumerate(requests):
            conn.send_headers(1 + 2 * i, headers, end_stream=True)
        tls.sendall(conn.data_to_send())
        tls.settimeout(10)
        done: set[int] = set()
        while len(done) < len(requests):
            data = tls.recv(65536)
            assert data, "the connection ended"
            for event in conn.receive_data(data):
                events.append(event)
                if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    done.add(event.stream_id)
                assert not isinstance(event, h2.events.ConnectionTerminated)
            tls.sendall(conn.data_to_send())
    return events


def _answers(events: list[Any]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for e in events:
        if isinstance(e, h2.events.ResponseReceived):
            out[e.stream_id] = [dict(e.headers)[b":status"], b""]
        elif isinstance(e, h2.events.DataReceived):
            out[e.stream_id][1] += e.data
        elif isinstance(e, h2.events.StreamReset):
            out[e.stream_id] = ("reset", int(e.error_code))
    return out


def test_a_malformed_stream_is_reset_alone(server: Server) -> None:
    answers = _answers(
        _streams(
            server,
            [*GET, ("X-Upper", "v")],
            [*GET, ("x-a", "b\x01c")],
            [GET[0], ("x-a", "b"), *GET[1:]],
            [*GET, (":path", "/x")],
            [GET[0], (":path", "version"), *GET[2:]],
            GET,
        )
    )
    assert [answers[i] for i in (1, 3, 5, 7, 9)] == [("reset", 1)] * 5
    assert answers[11][0] == b"200" and b'"major": "1"' in answers[11][1]


def test_http_1_framing_and_connect(server: Server) -> None:
    answers = _answers(
        _streams(
            server,
            [*GET, ("connection", "keep-alive")],
            [*GET, ("te", "gzip")],
            [(":method", "CONNECT"), (":authority", "a:443")],
        )
    )
    assert answers[1] == [b"400", b'request header "Connection" is not valid in HTTP/2\n']
    assert answers[3] == [b"400", b'request header "TE" may only be "trailers" in HTTP/2\n']
    assert answers[5] == [b"404", b"404 page not found\n"]


def test_a_body_other_than_declared(server: Server) -> None:
    """Shorter: what Go's body reader tells kube's handler, a Status 500; longer: the
    stream is reset."""
    context = server.ssl_context
    context.check_hostname = False
    context.set_alpn_protocols(["h2"])
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    path = "/api/v1/namespaces/default/configmaps?dryRun=All"
    events: list[Any] = []
    with context.wrap_socket(socket.create_connection((host, port)), server_hostname=host) as tls:
        conn.initiate_connection()
        for stream, length in ((1, "5"), (3, "1")):
            headers = [(":method", "POST"), (":path", path), *GET[2:]]
            headers += [("content-type", "application/json"), ("content-length", length)]
            conn.send_headers(stream, headers)
            conn.send_data(stream, b"{}", end_stream=True)
        tls.sendall(conn.data_to_send())
        tls.settimeout(10)
        while len({e.stream_id for e in events if _over(e)}) < 2:
            events += conn.receive_data(tls.recv(65536))
            tls.sendall(conn.data_to_send())
    answers = _answers(events)
    assert answers[1][0] == b"500"
    assert json.loads(answers[1][1]) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "request declared a Content-Length of 5 but only wrote 2 bytes",
        "code": 500,
    }
    assert answers[3] == ("reset", 1)


def _over(event: Any) -> bool:
    return isinstance(event, h2.events.StreamEnded | h2.events.StreamReset)
