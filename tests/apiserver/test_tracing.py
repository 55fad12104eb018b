"""kube's spans for a request: names, attributes, who may continue a caller's trace."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from twisted.internet.address import IPv4Address
from twisted.web.test.requesthelper import DummyRequest

from platform_api.apiserver.requestinfo import RequestInfo, parse
from platform_api.apiserver.tracing import Tracing, endpoint_version
from platform_api.apiserver.tracingattrs import span_name
from platform_api.apiserver.tracingconfig import TracingConfig
from platform_api.authentication.user import UserInfo
from platform_api.context import AUTHORIZATION, FAIRNESS, IMPERSONATION, TRACE_ATTRIBUTE
from platform_api.endpoints import serializespan
from platform_api.errors import unauthorized

ADMIN = UserInfo("admin", groups=["system:masters", "system:authenticated"])
ALICE = UserInfo("alice", groups=["system:authenticated"])
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


class Request(DummyRequest):
    """DummyRequest with what a twisted.web request also has."""

    code = 200
    sentLength = 0
    _received = 0

    def __init__(self, method: bytes, uri: bytes, headers: dict[bytes, bytes]) -> None:
        super().__init__([b""])
        self.method, self.uri, self.path = method, uri, uri.split(b"?")[0]
        self.clientproto = b"HTTP/1.1"
        self.client = IPv4Address("TCP", "10.0.0.7", 51234)
        for name, value in {b"host": b"127.0.0.1:6443", **headers}.items():
            self.requestHeaders.setRawHeaders(name, [value])
        self.responseHeaders.setRawHeaders(b"audit-id", [b"a1b2"])

    def isSecure(self) -> bool:
        return True

    def done(self, code: int, sent: int) -> None:
        self.code, self.sentLength = code, sent
        self.finish()


def info(method: str, uri: str) -> RequestInfo:
    path, _, _ = uri.partition("?")
    return parse(method.encode(), path, {})


STARTED = 1_700_000_000_000_000_000  # ns: when the request reached authentication
FILTERS = ["constrainedimpersonation", "priorityandfairness", "authorization"]


def traced(
    method: str, uri: str, user: UserInfo, rate: int = 1_000_000, **headers: str
) -> tuple[Request, list[ReadableSpan]]:
    """A request through the filters as the server's chain takes it (site.py)."""
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", rate), "apiserver-x", None, exporter)
    raw = {k.encode(): v.encode() for k, v in headers.items()}
    request = Request(method.encode(), uri.encode(), raw)
    where = info(method, uri)
    trace = tracing.request_span(request, where, user, STARTED)
    if trace is not None:
        for stage in (IMPERSONATION, FAIRNESS, AUTHORIZATION):
            trace.enter(stage)
        trace.handler(request, where)
        trace.end_handler()
    request.done(200, 42)
    return request, list(exporter.get_finished_spans())


def chain(spans: list[ReadableSpan], name: str) -> list[str]:
    """The names of span ``name`` and of its ancestors, up to its trace's root."""
    by_id = {span.context.span_id: span for span in spans}
    (span,) = [s for s in spans if s.name == name]
    names = [span.name]
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


def named(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    (span,) = [s for s in spans if s.name == name]
    return span


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_span_names_follow_kubes_route_shapes() -> None:
    cases = {
        ("GET", "/api/v1/namespaces/ns/pods/p"): "GET /api/v1/namespaces/{:namespace}/pods/{:name}",
        ("GET", "/apis/apps/v1/deployments"): "GET /apis/apps/v1/deployments",
        ("PUT", "/api/v1/namespaces/ns/pods/p/status"): (
            "PUT /api/v1/namespaces/{:namespace}/pods/{:name}/status"
        ),
        ("POST", "/api/v1/namespaces"): "POST /api/v1/namespaces",
        ("GET", "/healthz"): "GET",
        ("GET", "/apis"): "GET",
    }
    for (method, uri), name in cases.items():
        request = Request(method.encode(), uri.encode(), {})
        assert span_name(request, info(method, uri)) == name


def test_a_request_and_its_handler() -> None:
    _, spans = traced(
        "GET", "/api/v1/namespaces/ns/configmaps/c?x=1", ADMIN, **{"user-agent": "kubectl/v1"}
    )
    route = "GET /api/v1/namespaces/{:namespace}/configmaps/{:name}"
    # Ended inside out: the handler, the filters, the server span, authentication last.
    assert [span.name for span in spans] == [
        "Get",
        *FILTERS[::-1],
        "audit",
        route,
        "authentication",
    ]
    handler, server = spans[0], spans[-2]
    assert server.name == route
    assert server.kind is SpanKind.SERVER
    assert server.instrumentation_scope is not None
    assert server.instrumentation_scope.name == (
        "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
    )
    assert server.resource.attributes["service.name"] == "apiserver"
    assert server.resource.attributes["service.instance.id"] == "apiserver-x"
    assert attributes(server) == {
        "server.address": "127.0.0.1",
        "http.request.method": "GET",
        "url.scheme": "https",
        "server.port": 6443,
        "network.peer.address": "10.0.0.7",
        "network.peer.port": 51234,
        "user_agent.original": "kubectl/v1",
        "client.address": "10.0.0.7",
        "url.path": "/api/v1/namespaces/ns/configmaps/c",
        "network.protocol.version": "1.1",
        "http.target": "/api/v1/namespaces/ns/configmaps/c?x=1",
        "audit-id": "a1b2",
        "http.response.body.size": 42,
        "http.response.status_code": 200,
    }
    assert chain(spans, "Get") == ["Get", *FILTERS[::-1], "audit", route, "authentication"]
    authn = spans[-1]
    assert authn.parent is None and authn.start_time == STARTED
    assert authn.instrumentation_scope is not None
    assert authn.instrumentation_scope.name == "k8s.op/apiserver/pkg/endpoints/filterlatency"
    assert all(attributes(span) == {} for span in [*spans[1:5], authn])
    assert handler.name == "Get"
    assert attributes(handler) == {
        "accept": "",
        "audit-id": "a1b2",
        "client": "10.0.0.7",
        "api-group": "",
        "api-version": "v1",
        "name": "c",
        "subresource": "",
        "namespace": "ns",
        "protocol": "HTTP/1.1",
        "resource": "configmaps",
        "scope": "resource",
        "url": "/api/v1/namespaces/ns/configmaps/c",
        "user-agent": "kubectl/v1",
        "verb": "GET",
    }


def test_a_server_error_marks_the_span() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 1_000_000), "apiserver-x", None, exporter)
    request = Request(b"GET", b"/api/v1/namespaces", {})
    where = info("GET", "/api/v1/namespaces")
    assert tracing.request_span(request, where, ADMIN, STARTED) is not None
    request.done(503, 0)
    audit, span, authn = exporter.get_finished_spans()
    assert (audit.name, authn.name) == ("audit", "authentication")
    assert span.status.status_code is StatusCode.ERROR
    assert attributes(span)["http.response.status_code"] == 503


def test_privileged_callers_continue_their_trace() -> None:
    _, spans = traced("GET", "/api/v1/namespaces", ADMIN, rate=0, traceparent=PARENT)
    # kube's authentication span, a root of its own, is drawn at the rate: not at 0.
    assert chain(spans, "List") == ["List", *FILTERS[::-1], "audit", "GET /api/v1/namespaces"]
    server = spans[-1]
    assert f"{server.context.trace_id:032x}" == TRACE_ID
    assert server.parent is not None and f"{server.parent.span_id:016x}" == "00f067aa0ba902b7"


def test_anyone_else_starts_a_new_trace_linked_to_theirs() -> None:
    _, spans = traced("GET", "/api/v1/namespaces", ALICE, traceparent=PARENT)
    server = named(spans, "GET /api/v1/namespaces")
    assert f"{server.context.trace_id:032x}" != TRACE_ID
    assert server.parent is None
    # kube's authentication span began before: a trace of its own.
    authn = named(spans, "authentication")
    assert authn.parent is None and authn.context.trace_id != server.context.trace_id
    (link,) = server.links
    assert f"{link.context.trace_id:032x}" == TRACE_ID
    # ... and cannot make a server that samples nothing trace them.
    assert traced("GET", "/api/v1/namespaces", ALICE, rate=0, traceparent=PARENT)[1] == []


def test_nothing_is_traced_without_a_rate_or_a_sampled_caller() -> None:
    assert traced("GET", "/api/v1/namespaces", ADMIN, rate=0)[1] == []
    unsampled = f"00-{TRACE_ID}-00f067aa0ba902b7-00"
    assert traced("GET", "/api/v1/namespaces", ADMIN, rate=0, traceparent=unsampled)[1] == []


def test_outgoing_calls_carry_the_context() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 1_000_000), "apiserver-x", None, exporter)
    request = Request(b"POST", b"/api/v1/namespaces/ns/configmaps", {})
    where = info("POST", "/api/v1/namespaces/ns/configmaps")
    trace = tracing.request_span(request, where, ADMIN, STARTED)
    assert trace is not None
    trace.enter(AUTHORIZATION)
    trace.handler(request, where)
    call = trace.child("Call validating webhook", {"webhook": "w"})
    client, headers = trace.outgoing(call, "POST", "https://127.0.0.1:8443/v?timeout=10s")
    client.end()
    call.end()
    trace.end_handler()
    request.done(201, 10)
    spans = {span.name: span for span in exporter.get_finished_spans()}
    post = spans["HTTP POST"]
    assert post.kind is SpanKind.CLIENT
    assert attributes(post) == {
        "http.request.method": "POST",
        "url.full": "https://127.0.0.1:8443/v?timeout=10s",
        "server.address": "127.0.0.1",
        "server.port": 8443,
    }
    version, trace_id, span_id, flags = headers["traceparent"].split("-")
    assert (version, trace_id, span_id) == (
        "00",
        f"{post.context.trace_id:032x}",
        f"{post.context.span_id:016x}",
    )
    assert flags == "01"  # sampled; no W3C random bit, as Go's SDK sends it
    assert post.parent is not None
    assert post.parent.span_id == spans["Call validating webhook"].context.span_id
    assert spans["Call validating webhook"].parent.span_id == spans["Create"].context.span_id
    assert spans["Create"].parent.span_id == spans["authorization"].context.span_id
    assert spans["authorization"].parent.span_id == spans["audit"].context.span_id
    server = spans["POST /api/v1/namespaces/{:namespace}/configmaps"]
    assert spans["audit"].parent.span_id == server.context.span_id


def test_new_traces_are_sampled_at_the_rate() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 10_000), "apiserver-x", None, exporter)
    where = info("GET", "/api/v1/namespaces")
    traced = 0
    for _ in range(20_000):
        request = Request(b"GET", b"/api/v1/namespaces", {})
        traced += tracing.request_span(request, where, ALICE, STARTED) is not None
    assert 100 < traced < 320  # 1%: 200 expected; this fails once in ~10^9 runs


def test_a_server_without_priority_and_fairness_has_no_such_filter() -> None:
    exporter = InMemorySpanExporter()
    config = TracingConfig("localhost:4317", 1_000_000)
    tracing = Tracing(
        config, "apiserver-x", None, exporter, constrained_impersonation=False, fairness=False
    )
    request = Request(b"GET", b"/api/v1/namespaces", {})
    trace = tracing.request_span(request, info("GET", "/api/v1/namespaces"), ADMIN, STARTED)
    assert trace is not None
    for stage in (IMPERSONATION, FAIRNESS, AUTHORIZATION):
        trace.enter(stage)
    request.done(200, 2)
    names = [span.name for span in exporter.get_finished_spans()]
    route = "GET /api/v1/namespaces"
    assert names == ["authorization", "impersonation", "audit", route, "authentication"]


def test_a_request_refused_by_authentication_has_its_span_only() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 1_000_000), "apiserver-x", None, exporter)
    request = Request(b"GET", b"/api/v1/namespaces", {})
    tracing.unauthenticated(request, STARTED)
    assert exporter.get_finished_spans() == ()
    request.done(401, 129)
    (authn,) = exporter.get_finished_spans()
    assert (authn.name, authn.parent, authn.start_time) == ("authentication", None, STARTED)
    quiet = Tracing(TracingConfig("localhost:4317", 0), "apiserver-x", None, exporter)
    quiet.unauthenticated(Request(b"GET", b"/api", {}), STARTED)  # not drawn: nothing
    assert len(exporter.get_finished_spans()) == 1


def test_the_response_writer_finds_the_trace_and_the_handlers_endpoint() -> None:
    """SerializeObject goes under the handler while it runs (in its endpoint's group
    version: a scale's is autoscaling/v1), else under the innermost filter's span."""
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 1_000_000), "apiserver-x", None, exporter)
    uri = "/apis/apps/v1/namespaces/ns/deployments/d/scale"
    request = Request(b"GET", uri.encode(), {})
    trace = tracing.request_span(request, info("GET", uri), ADMIN, STARTED)
    assert trace is not None and getattr(request, TRACE_ATTRIBUTE) is trace
    assert (trace.handler_version, trace.authenticating) == (None, False)
    trace.enter(AUTHORIZATION)
    trace.handler(request, info("GET", uri))
    assert trace.handler_version == "autoscaling/v1"
    serialized = serializespan.Serialized(serializespan.versioning("json", False, "x"))
    serializespan.record(request, b"application/json", serialized, 10, False)
    trace.end_handler()
    assert trace.handler_version is None
    serializespan.record(request, b"application/json", serialized, 10, False)
    request.done(200, 10)
    spans = exporter.get_finished_spans()
    under_handler, under_filter = [s for s in spans if s.name == "SerializeObject"]
    assert chain(list(spans), "Get")[:2] == ["Get", "authorization"]
    by_id = {span.context.span_id: span.name for span in spans}
    assert under_handler.parent is not None and under_filter.parent is not None
    assert by_id[under_handler.parent.span_id] == "Get"
    assert by_id[under_filter.parent.span_id] == "authorization"


def test_endpoint_versions() -> None:
    assert endpoint_version(info("GET", "/api/v1/namespaces/ns/pods/p")) == "v1"
    assert endpoint_version(info("GET", "/apis/apps/v1/deployments")) == "apps/v1"
    eviction = info("POST", "/api/v1/namespaces/ns/pods/p/eviction")
    assert endpoint_version(eviction) == "policy/v1"
    status = info("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/status")
    assert endpoint_version(status) == "apps/v1"


def test_a_refusal_by_authentication_is_written_under_its_span() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(TracingConfig("localhost:4317", 1_000_000), "apiserver-x", None, exporter)
    request = Request(b"GET", b"/api/v1/namespaces", {})
    tracing.unauthenticated(request, STARTED)
    refused = getattr(request, TRACE_ATTRIBUTE)
    assert (refused.handler_version, refused.authenticating) == (None, True)
    error = serializespan.for_error(request, unauthorized(), "json", False)
    assert error == serializespan.Serialized(
        serializespan.versioning("json", False, "v1"), serializespan.HANDLER
    )
    serializespan.record(request, b"application/json", error, 129, False)
    request.done(401, 129)
    written, authn = exporter.get_finished_spans()
    assert (written.name, authn.name) == ("SerializeObject", "authentication")
    assert written.parent is not None and written.parent.span_id == authn.context.span_id
    assert dict(written.attributes or {})["audit-id"] == "a1b2"
