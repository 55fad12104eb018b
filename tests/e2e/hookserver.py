"""A webhook in the test process: an HTTPS server on a free loopback port, its
handler's answers written as kube's webhook clients read them."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from platform_api.apiserver import pki


class ReviewHandler(BaseHTTPRequestHandler):
    """Answers each AdmissionReview with ``respond``'s response (a subclass says)."""

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"allowed": True}

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        response = {"uid": review["request"]["uid"], **self.respond(review["request"])}
        answer = {
            "apiVersion": review["apiVersion"],
            "kind": "AdmissionReview",
            "response": response,
        }
        self.send_json(json.dumps(answer).encode())

    def send_json(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], root: Path) -> Iterator[tuple[pki.Paths, int]]:
    """``handler`` served over TLS with a certificate for 127.0.0.1 (its CA in the
    yielded paths) and the port it listens on."""
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.serving_cert, certs.serving_key)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield certs, httpd.server_address[1]
    finally:
        httpd.shutdown()
