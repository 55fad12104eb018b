"""Request bodies as kube-apiserver reads them: a chunked body Go's reader cannot read
is the reader's message in a Status 500 to a handler that reads the body; a body past
3 MiB is a 413 answered once that much has come; either way the connection closes
after the answer.  A handler that reads no body (a GET) serves the request.  Where a
request is wrong twice, kube's handlers say which first.  Every expected answer was
recorded from kube-apiserver v1.36 (the reference build) for the same bytes."""

from __future__ import annotations

import contextlib
import json
import socket
import time

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.test_request_lines import CM, answered

OK = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"chunked"}}'
BAD = b"zz\r\n"  # no hex digits: "invalid byte in chunk length"


def _request(method: str, path: str, body: bytes, content_type: str = "application/json") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: a\r\nContent-Type: {content_type}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode() + body


def _chunk(data: bytes, size: bytes | None = None) -> bytes:
    return (b"%x" % len(data) if size is None else size) + b"\r\n" + data + b"\r\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (BAD, "invalid byte in chunk length"),
        (b"\r\n", "empty hex number for chunk length"),
        (b"0" * 17 + b"\r\n", "http chunk length too large"),
        (b"%x\n" % len(OK) + OK, "chunked line ends with bare LF"),
        (b"%x\r\n" % len(OK) + OK + b"XX", "malformed chunked encoding"),
        (b"1" * 5000, "header line too long"),
        (
            _chunk(OK) + b"0\r\nbad trailer\r\n\r\n",
            'malformed MIME header: missing colon: "bad trailer"',
        ),
    ],
)
def test_a_chunked_body_go_cannot_read_is_a_500(
    server: Server, admin: requests.Session, body: bytes, message: str
) -> None:
    status, headers, answer = answered(server, _request("POST", CM, body))
    assert status == b"HTTP/1.1 500 Internal Server Error"
    assert headers["connection"] == "close"
    assert json.loads(answer) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": 500,
    }
    assert admin.get(server.url + CM + "/chunked").status_code == 404  # nothing written


@pytest.mark.parametrize(
    "size",
    [b"%X" % len(OK), b"%016x" % len(OK), b"%x \t" % len(OK), b"%x;a=b" % len(OK)],
)
def test_chunked_bodies_go_reads(server: Server, admin: requests.Session, size: bytes) -> None:
    body = _chunk(OK, size) + b"0\r\nX-Trailer: y\r\n\r\n"
    status, _, _ = answered(
        server,
        _request("POST", CM + "?dryRun=All", body).replace(
            b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1
        ),
    )
    assert status == b"HTTP/1.1 201 Created"


def test_handlers_that_read_no_body_serve_the_request(server: Server) -> None:
    status, headers, answer = answered(server, _request("GET", CM, BAD))
    assert status == b"HTTP/1.1 200 OK" and headers["connection"] == "close"
    assert json.loads(answer)["kind"] == "ConfigMapList"
    # a DELETE reads its body (DeleteOptions) before it looks for the object
    status, _, answer = answered(server, _request("DELETE", CM + "/nope", BAD))
    assert status == b"HTTP/1.1 500 Internal Server Error"
    assert json.loads(answer)["message"] == "invalid byte in chunk length"


OPTIONS = "?fieldValidation=Bogus&dryRun=Bad"


@pytest.mark.parametrize(
    ("method", "path", "content_type", "body", "accept", "code"),
    [
        # create: the answer's type, the body's type, the body, then the options
        ("POST", CM, "text/foo", BAD, "", 415),
        ("POST", CM + OPTIONS, "application/json", BAD, "", 500),
        ("POST", CM + OPTIONS, "text/foo", _chunk(OK) + b"0\r\n\r\n", "", 415),
        ("POST", CM, "text/foo", _chunk(OK) + b"0\r\n\r\n", "text/foo", 406),
        # update: the body, its options, then the body's type
        ("PUT", CM + "/chunked", "text/foo", BAD, "", 500),
        ("PUT", CM + "/chunked" + OPTIONS, "application/json", BAD, "", 500),
        ("PUT", CM + "/chunked" + OPTIONS, "text/foo", _chunk(OK) + b"0\r\n\r\n", "", 422),
        # patch: the patch's type (before the answer's), the body, then the options
        ("PATCH", CM + "/chunked", "text/foo", BAD, "", 415),
        ("PATCH", CM + "/chunked" + OPTIONS, "application/merge-patch+json", BAD, "", 500),
        ("PATCH", CM + "/chunked", "text/foo", _chunk(b"{}") + b"0\r\n\r\n", "text/foo", 415),
        ("PATCH", CM + "/chunked", "application/merge-patch+json", BAD, "text/foo", 406),
    ],
)
def test_which_problem_kube_answers_first(
    server: Server,
    method: str,
    path: str,
    content_type: str,
    body: bytes,
    accept: str,
    code: int,
) -> None:
    data = _request(method, path, body, content_type)
    if accept:
        data = data.replace(b"\r\nHost: a", b"\r\nHost: a\r\nAccept: " + accept.encode(), 1)
    if b"\r\n0\r\n\r\n" in body:  # a readable body: the connection would stay open
        data = data.replace(b"\r\nHost: a", b"\r\nHost: a\r\nConnection: close", 1)
    status, _, _ = answered(server, data)
    assert int(status.split()[1]) == code


def test_a_body_past_the_limit_is_413_once_the_limit_has_come(server: Server) -> None:
    """A 100 MB body is refused after a little over 3 MiB has arrived, not at its end,
    and the connection closes."""
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    context = server.ssl_context
    context.check_hostname = False
    with context.wrap_socket(socket.create_connection((host, port)), server_hostname=host) as tls:
        tls.sendall(
            f"POST {CM} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            "Content-Length: 100000000\r\n\r\n".encode()
        )
        tls.setblocking(False)
        sent, answer, piece = 0, b"", b"x" * 65536
        deadline = time.monotonic() + 30
        while not answer and sent < 100_000_000 and time.monotonic() < deadline:
            try:
                sent += tls.send(piece)
            except OSError:  # would block (ssl's SSLWantWriteError is one)
                time.sleep(0.001)
            with contextlib.suppress(OSError):
                answer = tls.recv(65536)
        tls.setblocking(True)
        tls.settimeout(10)
        while more := tls.recv(65536):
            answer += more
    assert sent < 32 << 20  # the limit, and what the kernel's socket buffers took
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert b"\r\nConnection: close\r\n" in head + b"\r\n"
    assert json.loads(body)["message"] == "Request entity too large: limit is 3145728"
