"""A traced response carries kube's ``SerializeObject`` span: the codec chain, the writer
and the size kube-apiserver v1.36's own spans show for the same request (read off the
reference build), under the handler or the filter that wrote it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import VENV_BIN, Server, session_for
from tests.e2e.test_tracing import Sink, Span, sink, traced_server

__all__ = ["sink"]  # the module's OTLP receiver: test_tracing's fixture, one per module
NAMESPACE = "traced-responses"
HANDLER = "*responsewriter.outerWithCloseNotifyFlushAndHijack"
FILTER = (
    "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier; "
    "http.Hijacker }"
)
JSON = '{"name":"json","pretty":"false","strict":"false","yaml":"false"}'
PRETTY = '{"name":"json","pretty":"true","strict":"false","yaml":"false"}'
YAML = '{"name":"json","pretty":"false","strict":"false","yaml":"true"}'
PROTOBUF = "application/vnd.platform.protobuf"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def versioning(encoder: str, group_version: str | None = None) -> str:
    """kube's versioning codec identifier (Go's JSON of a map: keys sorted)."""
    gv = f'"encodeGV":"{group_version}",' if group_version is not None else ""
    return f'{{{gv}"encoder":{_quoted(encoder)},"name":"versioning"}}'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, sink: Sink) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("traced-responses")
    running = traced_server(root, sink, 1_000_000, "--authorization-mode=RBAC")
    admin = session_for(running, cert=running.admin_cert)
    namespace = {"metadata": {"name": NAMESPACE}}
    assert admin.post(f"{running.url}/api/v1/namespaces", json=namespace).status_code == 201
    yield running
    running.stop()


@pytest.fixture
def admin(server: Server) -> requests.Session:
    return session_for(server, cert=server.admin_cert)


def _url(server: Server, name: str = "") -> str:
    base = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    return f"{base}/{name}" if name else base


def _serialized(sink: Sink, response: requests.Response) -> tuple[Span, str]:
    """The request's SerializeObject span, once exported, and its parent's name."""
    audit_id = response.headers["Audit-Id"]

    def mine(spans: list[Span]) -> list[Span]:
        return [s for s in spans if s["attributes"].get("audit-id") == audit_id]

    def found(spans: list[Span]) -> bool:
        """The span and its parent, which ends later and may come in a later export."""
        ids = {s["span_id"] for s in spans}
        serialized = [s for s in mine(spans) if s["name"] == "SerializeObject"]
        return any(s["parent_span_id"] in ids for s in serialized)

    spans = sink.wait(found)
    (span,) = [s for s in mine(spans) if s["name"] == "SerializeObject"]
    (parent,) = [s for s in spans if s["span_id"] == span["parent_span_id"]]
    return span, parent["name"]


def _expect(
    sink: Sink,
    response: requests.Response,
    parent: str,
    encoder: str,
    writer: str = HANDLER,
    media: str = "application/json",
    size: int | None = None,
) -> None:
    span, parent_name = _serialized(sink, response)
    request = response.request
    path = request.path_url.partition("?")[0]
    assert parent_name == parent
    attributes: dict[str, Any] = {
        "audit-id": response.headers["Audit-Id"],
        "method": request.method,
        "url": path,
        "protocol": "HTTP/1.1",
        "mediaType": media,
        "encoder": encoder,
    }
    assert span["attributes"] == attributes
    written = len(response.content) if size is None else size
    assert span["events"] == [
        ["About to start writing response", {"writer": writer, "size": written}],
        ["Write call succeeded", {"size": written}],
    ]
    assert span["kind"] == "INTERNAL" and span["scope"] == "k8s.io/component-base/tracing"


def test_a_handlers_answer_in_each_encoding(
    server: Server, admin: requests.Session, sink: Sink
) -> None:
    created = admin.post(_url(server), json={"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert created.status_code == 201
    _expect(sink, created, "Create", versioning(JSON, "v1"))
    got = admin.get(_url(server, "a"), headers={"Accept": "application/yaml"})
    _expect(sink, got, "Get", versioning(YAML, "v1"), media="application/yaml")
    got = admin.get(_url(server, "a"), headers={"Accept": PROTOBUF})
    _expect(sink, got, "Get", versioning("protobuf", "v1"), media=PROTOBUF)
    got = admin.get(_url(server, "a"), params={"pretty": "true"})
    _expect(sink, got, "Get", versioning(PRETTY, "v1"))
    table = "application/json;as=Table;v=v1;g=meta.platform.io"
    got = admin.get(_url(server, "a"), headers={"Accept": table})
    assert got.status_code == 200
    _expect(sink, got, "Get", versioning(JSON, "meta.platform.io/v1"))
    listed = admin.get(_url(server))
    _expect(sink, listed, "List", versioning(JSON, "v1"))
    deleted = admin.delete(_url(server, "a"))
    _expect(sink, deleted, "Delete", versioning(JSON, "v1"))


def test_a_large_answer_is_counted_before_gzip(
    server: Server, admin: requests.Session, sink: Sink
) -> None:
    big = {"metadata": {"name": "big"}, "data": {"k": "x" * 200_000}}
    created = admin.post(_url(server), json=big, headers={"Accept-Encoding": "identity"})
    assert created.status_code == 201
    assert "Content-Encoding" not in created.headers
    _expect(sink, created, "Create", versioning(JSON, "v1"))
    got = admin.get(_url(server, "big"), headers={"Accept-Encoding": "gzip"})
    assert got.headers["Content-Encoding"] == "gzip"
    _expect(sink, got, "Get", versioning(JSON, "v1"), writer="*gzip.Writer")
    # kube compresses a collection delete's answer as any other its serializers write
    gone = admin.delete(_url(server), headers={"Accept-Encoding": "gzip"})
    assert gone.status_code == 200 and gone.headers["Content-Encoding"] == "gzip"
    _expect(sink, gone, "Delete", versioning(JSON, "v1"), writer="*gzip.Writer")


def test_errors_are_written_where_they_arise(
    server: Server, admin: requests.Session, sink: Sink
) -> None:
    missing = admin.get(_url(server, "missing"))
    assert missing.status_code == 404
    _expect(sink, missing, "Get", versioning(JSON, "v1"))
    scale = admin.get(f"{server.url}/apis/apps/v1/namespaces/{NAMESPACE}/deployments/d/scale")
    assert scale.status_code == 404
    _expect(sink, scale, "Get", versioning(JSON, "autoscaling/v1"))
    # go-restful's own answers: before any handler, no group version to convert to
    no_route = admin.get(f"{server.url}/api/v1/foos")
    assert no_route.status_code == 404
    _expect(sink, no_route, "authorization", versioning(JSON), writer="*restful.Response")
    no_method = admin.post(_url(server, "x"), json={})
    assert no_method.status_code == 405
    _expect(sink, no_method, "authorization", versioning(JSON), writer="*restful.Response")
    # the filters write theirs in v1: authentication's outside the tracing filter
    unknown = session_for(server, token="not-a-token").get(_url(server))
    assert unknown.status_code == 401
    _expect(sink, unknown, "authentication", versioning(JSON, "v1"))
    alice = session_for(server, token="tok-alice")
    forbidden = alice.get(f"{server.url}/apis/apps/v1/deployments")
    assert forbidden.status_code == 403
    _expect(sink, forbidden, "authorization", versioning(JSON, "v1"), writer=FILTER)


def test_discovery_documents(server: Server, admin: requests.Session, sink: Sink) -> None:
    legacy = admin.get(f"{server.url}/api")
    strip = '{"encoder":' + _quoted(versioning(JSON)) + ',"name":"stripVersion"}'
    _expect(sink, legacy, "authorization", strip, writer=FILTER)
    groups = admin.get(f"{server.url}/apis")
    _expect(sink, groups, "authorization", versioning(JSON), writer=FILTER)
    aggregated = "application/json;g=apidiscovery.platform.io;v=v2;as=APIGroupDiscoveryList"
    document = admin.get(f"{server.url}/apis", headers={"Accept": aggregated})
    assert document.status_code == 200
    v2 = versioning(JSON, "apidiscovery.platform.io/v2")
    _expect(sink, document, "authorization", v2, media=aggregated)


def test_over_http2_kube_names_its_http2_writers(server: Server, sink: Sink) -> None:
    """kubectl speaks HTTP/2: kube's writers there cannot be hijacked, and say so."""
    kubectl = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig)]
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps/over-http2"
    missing = subprocess.run(
        [*kubectl, "get", "--raw", path], check=False, capture_output=True, text=True
    )
    assert missing.returncode == 1 and "not found" in missing.stderr
    subprocess.run([*kubectl, "get", "--raw", "/apis"], check=True, capture_output=True)

    def over_http2(url: str) -> Callable[[list[Span]], list[Span]]:
        def found(spans: list[Span]) -> list[Span]:
            return [
                s
                for s in spans
                if s["name"] == "SerializeObject"
                and s["attributes"]["url"] == url
                and s["attributes"]["protocol"] == "HTTP/2.0"
            ]

        return found

    (handler,) = over_http2(path)(sink.wait(lambda spans: bool(over_http2(path)(spans))))
    assert handler["attributes"]["encoder"] == versioning(JSON, "v1")
    status = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
    status += b'"configmaps \\"over-http2\\" not found","reason":"NotFound","details":'
    status += b'{"name":"over-http2","kind":"configmaps"},"code":404}\n'
    writer = "responsewriter.outerWithCloseNotifyAndFlush"
    assert handler["events"] == [
        ["About to start writing response", {"writer": writer, "size": len(status)}],
        ["Write call succeeded", {"size": len(status)}],
    ]
    groups = over_http2("/apis")(sink.wait(lambda spans: bool(over_http2("/apis")(spans))))
    filter_writer = (
        "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier }"
    )
    assert groups[0]["events"][0][1]["writer"] == filter_writer
