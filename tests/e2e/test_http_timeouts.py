"""Slow request heads end when kube-apiserver's would: its ``http.Server`` gives a head
32 s (ReadHeaderTimeout).  Slow: the clock is kube's (HTTP/2 idle time: test_http2_idle)."""

from __future__ import annotations

import socket
import ssl
import time

import pytest

from tests.e2e.conftest import Server

CM = "/api/v1/namespaces/default/configmaps"
pytestmark = pytest.mark.slow


def test_a_head_trickled_a_byte_at_a_time_is_cut_off_at_32_seconds(server: Server) -> None:
    """A client that never finishes its head (slowloris) does not keep a connection: at
    32 s Go takes the part of a line that came for the line; a header line without a
    colon is a 400, as kube-apiserver v1.36 answers (recorded with the reference)."""
    trust = ssl.create_default_context(cafile=server.ca)
    trust.check_hostname = False
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    with trust.wrap_socket(socket.create_connection((host, port)), server_hostname=host) as tls:
        tls.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        tls.settimeout(1.0)
        sent, answer = 0, b""
        while time.monotonic() - started < 45:
            due = int((time.monotonic() - started) // 5)  # a byte each 5 s: "X-Slow" by 30 s
            if sent < min(due, 6):
                tls.sendall(b"X-Slow"[sent : sent + 1])
                sent += 1
            try:
                data = tls.recv(4096)
            except TimeoutError:
                continue
            if not data:
                break
            answer += data
    assert 31 < time.monotonic() - started < 40
    assert answer == (
        b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Connection: close\r\n\r\n400 Bad Request"
    )
