"""HTTP/2 connections end when kube-apiserver's would: Go's server counts the idle
timeout (90 s) only while no stream is open.  Slow: the clock is kube's; a module of its
own so that it runs beside the other slow cases."""

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
