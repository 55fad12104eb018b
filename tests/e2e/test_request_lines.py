"""What Go's net/http answers before kube-apiserver's handlers do, and what its muxes do
not match: malformed heads, body framing, request lines, queries, doubled slashes and
methods.  Every expected answer was recorded from kube-apiserver v1.36 (the reference
build of ../shared/tools/reference-apiserver) for the same bytes."""

from __future__ import annotations

import json
import socket

import pytest
import requests

from tests.e2e.conftest import Server

CM = "/api/v1/namespaces/default/configmaps"
POST_CM = f"POST {CM} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n".encode()


def exchange(server: Server, data: bytes) -> bytes:
    """``data`` sent as is over TLS (as the administrator); all the server sent back
    until it closed."""
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    context = server.ssl_context
    context.check_hostname = False
    with context.wrap_socket(socket.create_connection((host, port)), server_hostname=host) as tls:
        tls.sendall(data)
        tls.settimeout(10)
        received = b""
        while chunk := tls.recv(65536):
            received += chunk
    return received


def answered(server: Server, data: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """The status line, headers (lower-cased names) and body of the one answer."""
    head, _, body = exchange(server, data).partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = dict(line.decode().lower().split(": ", 1) for line in lines)
    return status, headers, body


def go(status: bytes) -> bytes:
    """net/http's own answer: status line, two headers, the status as the body."""
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Connection: close\r\n\r\n" + status
    )


BAD = go(b"400 Bad Request")


@pytest.mark.parametrize(
    ("head", "answer"),
    [
        (b"GET /livez HTTP/1.1\r\n\r\n", go(b"400 Bad Request: missing required Host header")),
        (b"GET /livez HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", BAD),
        (
            b"GET /livez HTTP/2.0\r\nHost: a\r\n\r\n",
            go(b"505 HTTP Version Not Supported: unsupported protocol version"),
        ),
        (
            b"GET /livez HTTP/0.9\r\nHost: a\r\n\r\n",
            go(b"505 HTTP Version Not Supported: unsupported protocol version"),
        ),
        (b"GET /livez HTTP/3\r\nHost: a\r\n\r\n", BAD),
        (b"GET /li vez HTTP/1.1\r\nHost: a\r\n\r\n", BAD),
        (b"GET ?a=b HTTP/1.1\r\nHost: a\r\n\r\n", BAD),
        (b"GET livez HTTP/1.1\r\nHost: a\r\n\r\n", BAD),
        (b"GET " + CM.encode() + b"/a%ZZ HTTP/1.1\r\nHost: a\r\n\r\n", BAD),
        (b"GET /livez HTTP/1.1\r\nHost: a\r\nBogus\r\n\r\n", BAD),
        (
            b"GET /livez HTTP/1.1\r\nHost: a\r\nX A: b\r\n\r\n",
            go(b"400 Bad Request: invalid header name"),
        ),
        (
            b"GET /livez HTTP/1.1\r\nHost: a b\r\n\r\n",
            go(b"400 Bad Request: malformed Host header"),
        ),
        (b"GET /livez HTTP/1.1\r\nHost: a\r\nX-A: b\x01\r\n\r\n", BAD),
        (b"GET /livez HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", BAD),
        (  # Host and 500 more: past Go's 500 header lines (DefaultMaxHeaderValueCount)
            b"GET /livez HTTP/1.1\r\nHost: a\r\n" + b"X-H: v\r\n" * 500 + b"\r\n",
            go(b"431 Request Header Fields Too Large"),
        ),
        (POST_CM + b"Content-Length: -1\r\n\r\n{}", BAD),
        (POST_CM + b"Content-Length: abc\r\n\r\n{}", BAD),
        (POST_CM + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ", BAD),
        (
            POST_CM + b"Transfer-Encoding: gzip\r\n\r\n{}",
            b"HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Connection: close\r\n\r\nUnsupported transfer encoding",
        ),
    ],
)
def test_heads_go_refuses_itself(server: Server, head: bytes, answer: bytes) -> None:
    assert exchange(server, head) == answer


@pytest.mark.parametrize(
    "framing",
    [
        b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        # chunked wins and the Content-Length is dropped, as Go drops it
        b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",  # the same length twice is one
    ],
)
def test_bodies_framed_as_go_takes_them_are_read(server: Server, framing: bytes) -> None:
    """The body ``{}`` reached the handler: a ConfigMap with no name, kube's 422."""
    status, _, body = answered(server, POST_CM + b"Connection: close\r\n" + framing)
    assert status == b"HTTP/1.1 422 Unprocessable Entity"
    assert json.loads(body)["message"] == (
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )


def test_an_expectation_go_cannot_meet_is_417(server: Server) -> None:
    head = b"GET /livez HTTP/1.1\r\nHost: a\r\nExpect: fancy\r\n\r\n"
    status, headers, body = answered(server, head)
    assert (status, headers["connection"], headers["content-length"], body) == (
        b"HTTP/1.1 417 Expectation Failed",
        "close",
        "0",
        b"",
    )


def test_a_head_of_lf_line_ends_is_read(server: Server) -> None:
    status, _, body = answered(server, b"GET /version HTTP/1.1\nHost: a\nConnection: close\n\n")
    assert status == b"HTTP/1.1 200 OK" and json.loads(body)["major"] == "1"


def test_a_repeated_header_is_its_first_value(server: Server) -> None:
    """Go's ``Header.Get`` (Twisted's ``getHeader`` read the last): the body's type and
    the answer's are the first of two."""
    namespace = b"GET /api/v1/namespaces/default HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
    _, headers, body = answered(
        server, namespace + b"Accept: application/yaml\r\nAccept: application/json\r\n\r\n"
    )
    assert headers["content-type"] == "application/yaml" and body.startswith(b"apiVersion: v1")
    created = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}}'
    head = (
        f"POST {CM}?dryRun=All HTTP/1.1\r\nHost: a\r\nConnection: close\r\n".encode()
        + b"Content-Type: text/foo\r\nContent-Type: application/json\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(created)
    )
    status, _, body = answered(server, head + created)
    assert status == b"HTTP/1.1 415 Unsupported Media Type", body


def test_request_lines_go_takes(server: Server) -> None:
    """An absolute URI's path is the request's; any HTTP/1 minor version is HTTP/1.1;
    bytes past ASCII in a path are taken as the bytes they are."""
    port = server.url.rsplit(":", 1)[1]
    for line in (f"GET https://127.0.0.1:{port}/version HTTP/1.1", "GET /version HTTP/1.2"):
        status, _, body = answered(
            server, line.encode() + b"\r\nHost: a\r\nConnection: close\r\n\r\n"
        )
        assert status == b"HTTP/1.1 200 OK" and json.loads(body)["major"] == "1"
    line = f"GET {CM}/\u00e9 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
    status, _, body = answered(server, line)
    assert status == b"HTTP/1.1 404 Not Found"
    assert json.loads(body)["message"] == 'configmaps "\u00e9" not found'


def test_a_query_pair_go_cannot_read_is_dropped(server: Server) -> None:
    """``%ZZ`` is no escape: Go's ParseQuery drops the pair, and one holding ``;`` (the
    whole list is answered, no selector refused).  Sent raw: requests re-escapes ``%``."""
    for query in ("labelSelector=%ZZ", "labelSelector=a;b", "labelSelector=%ZZ&limit=1"):
        head = f"GET {CM}?{query} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        status, _, body = answered(server, head.encode())
        assert status == b"HTTP/1.1 200 OK" and json.loads(body)["kind"] == "ConfigMapList", query
    head = f"GET {CM}?labelSelector=%21%21 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    status, _, body = answered(server, head.encode())
    assert status == b"HTTP/1.1 400 Bad Request" and json.loads(body)["reason"] == "BadRequest"


def test_paths_kube_authorizes_as_resources_but_routes_nowhere(
    server: Server, admin: requests.Session
) -> None:
    """kube's RequestInfo strips the slashes, its director does not: Go's text 404."""
    for path in ("//api/v1/namespaces", "//apis/apps/v1/deployments", "/apis//apps/v1/deployments"):
        status, headers, body = answered(
            server, f"GET {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
        )
        assert (status, body) == (b"HTTP/1.1 404 Not Found", b"404 page not found\n")
        assert headers["content-type"] == "text/plain; charset=utf-8"
    assert admin.get(server.url + "/api/v1//namespaces").json()["reason"] == "NotFound"


@pytest.mark.parametrize(
    "target", ["https://h", "http://h?a=b", "https://", "mailto:x", "*", "/%2Fversion"]
)
def test_targets_whose_go_path_is_empty_or_no_path_get_the_404_page(
    server: Server, target: str
) -> None:
    """An absolute URI without a path has Go's empty path, ``*`` is kept as it is, and
    ``/%2Fversion`` is ``//version`` once decoded: kube's muxes match none of them."""
    head = f"GET {target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
    status, headers, body = answered(server, head)
    assert (status, body) == (b"HTTP/1.1 404 Not Found", b"404 page not found\n")
    assert headers["content-type"] == "text/plain; charset=utf-8"


def test_options_star_is_go_s_own_empty_answer(server: Server) -> None:
    status, headers, body = answered(
        server, b"OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    )
    assert (status, headers["content-length"], body) == (b"HTTP/1.1 200 OK", "0", b"")


@pytest.mark.parametrize(
    "target",
    ["https:/version", "https:///version", "HTTPS://u:p@[::1]:1/version", "h+t://h!/version"],
)
def test_absolute_uris_go_takes(server: Server, target: str) -> None:
    head = f"GET {target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
    status, _, body = answered(server, head)
    assert status == b"HTTP/1.1 200 OK" and json.loads(body)["major"] == "1"


@pytest.mark.parametrize(
    "target",
    [
        "https://h:abc/version",
        "https://h:1:2/version",
        "https://[::1/version",
        "https://h%41/version",
        "https://h#f",
        "https://h{/version",
        "https://u^@h/version",
        ":x/version",
    ],
)
def test_absolute_uris_go_cannot_parse_are_400(server: Server, target: str) -> None:
    head = f"GET {target} HTTP/1.1\r\nHost: a\r\n\r\n".encode()
    assert exchange(server, head) == BAD


def test_a_method_in_another_case_is_no_get_on_go_restful_routes(
    server: Server, admin: requests.Session
) -> None:
    """go-restful matches methods as sent; kube's plain handlers take any method."""
    for path in ("/version", "/api", "/api/v1", "/apis/apps/v1", "/openid/v1/jwks"):
        status, _, body = answered(
            server, f"get {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode()
        )
        assert status == b"HTTP/1.1 405 Method Not Allowed", path
        assert json.loads(body)["reason"] == "MethodNotAllowed"
    status, _, body = answered(
        server, b"get /apis HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    )
    assert status == b"HTTP/1.1 200 OK" and json.loads(body)["kind"] == "APIGroupList"


def test_a_form_body_is_no_query(server: Server, admin: requests.Session) -> None:
    """twisted.web read a urlencoded POST body into the request's parameters; kube
    reads none, and refuses the body's type."""
    r = admin.post(
        server.url + CM,
        data="dryRun=Bogus&fieldManager=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (r.status_code, r.json()["reason"]) == (415, "UnsupportedMediaType")


def test_unaggregated_discovery_varies_on_nothing(server: Server, admin: requests.Session) -> None:
    for path in ("/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1"):
        r = admin.get(server.url + path, headers={"Accept": "application/json"})
        assert r.status_code == 200 and "Vary" not in r.headers, path
    aggregated = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    assert (
        admin.get(server.url + "/apis", headers={"Accept": aggregated}).headers["Vary"] == "Accept"
    )
