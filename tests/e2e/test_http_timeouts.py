"""Slow request heads and idle connections end when kube-apiserver's would: its
``http.Server`` gives a head 32 s (ReadHeaderTimeout) and a connection with nothing open
90 s (IdleTimeout), over HTTP/1.1 and HTTP/2 alike.  Slow: the clocks are kube's."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from typing import Any

import httpx
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


def test_http2_idle_time_counts_only_while_nothing_is_open(server: Server) -> None:
    """Go's HTTP/2 idle timeout: a watch whose client sends nothing lasts its own
    timeout (Twisted's cut it at a minute with GOAWAY PROTOCOL_ERROR), and a connection
    with no stream open is closed 90 s on even if its client keeps sending PINGs."""
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    outcome: dict[str, Any] = {}

    def watch() -> None:
        trust = ssl.create_default_context(cafile=server.ca)
        trust.load_cert_chain(*server.admin_cert)
        started = time.monotonic()
        with httpx.Client(http2=True, verify=trust, timeout=None, trust_env=False) as client:
            params = {"watch": "1", "timeoutSeconds": "100", "resourceVersion": "0"}
            with client.stream("GET", server.url + CM, params=params) as response:
                outcome["watch"] = (response.http_version, response.status_code)
                for _ in response.iter_bytes():
                    pass
        outcome["watch lasted"] = time.monotonic() - started

    def pings() -> None:
        trust = ssl.create_default_context(cafile=server.ca)
        trust.check_hostname = False
        trust.set_alpn_protocols(["h2"])
        raw = socket.create_connection((host, port))
        with trust.wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\0\0\0\4\0\0\0\0\0")  # + SETTINGS
            started, last = time.monotonic(), 0.0
            tls.settimeout(1.0)
            while time.monotonic() - started < 120:
                if time.monotonic() - last > 20:
                    tls.sendall(b"\0\0\x08\x06\0\0\0\0\0" + b"pingping")  # PING
                    last = time.monotonic()
                try:
                    if not tls.recv(65536):
                        break
                except TimeoutError:
                    continue
            outcome["pinged connection lasted"] = time.monotonic() - started

    threads = [threading.Thread(target=watch), threading.Thread(target=pings)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=150)
    assert outcome["watch"] == ("HTTP/2", 200)
    assert 99 < outcome["watch lasted"] < 110
    assert 89 < outcome["pinged connection lasted"] < 95
