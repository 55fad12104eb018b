"""OpenTelemetry spans as kube-apiserver sends them (``--tracing-config-file``).

Each authenticated request gets otelhttp's server span, named for its route
(``GET /api/v1/namespaces/{:namespace}/pods/{:name}``) with otelhttp's attributes plus
kube's ``http.target`` and ``audit-id``; the verb handler a child span (``Get``,
``Create``, ...) with kube's request fields; an admission webhook call a ``Call
validating webhook`` span and an ``HTTP POST`` client span whose context goes to the
webhook in ``traceparent``.  An incoming ``traceparent`` is the parent for
``system:masters`` and ``system:monitoring`` only; anyone else's request starts a new
trace linked to theirs (kube's public-endpoint rule), so a client cannot make the server
sample.  Spans are batched on the reactor and sent over OTLP gRPC (tracingexport.py).

Without the flag this module (and the SDK, ~0.3 s to import) is not imported and no
request carries a span; with a rate of 0, only requests whose privileged caller's trace
is sampled are traced.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context as OtelContext
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
from opentelemetry.trace import Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from twisted.web.server import Request

from platform_api.apiserver import requestinfo
from platform_api.apiserver.tracingattrs import (
    audit_id,
    carrier,
    handler_fields,
    request_attributes,
    serialize_fields,
    span_name,
)
from platform_api.apiserver.tracingconfig import TracingConfig
from platform_api.apiserver.tracingexport import ReactorSpanProcessor, otlp_sender
from platform_api.apiserver.tracingrpc import GRPC_SCOPE, GrpcCallSpan
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.context import AUDIT, AUTHORIZATION, FAIRNESS, IMPERSONATION, TRACE_ATTRIBUTE

HTTP_SCOPE = ("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "0.65.0")
COMPONENT_SCOPE = "k8s.io/component-base/tracing"
FILTER_SCOPE = "k8s.op/apiserver/pkg/endpoints/filterlatency"  # sic: kube's tracer name
PRIVILEGED = (MASTERS, "system:monitoring")  # kube's notSystemPrivilegedGroup
HANDLER_SPANS = {
    "get": "Get",
    "list": "List",
    "create": "Create",
    "update": "Update",
    "patch": "Patch",
    "delete": "Delete",
    "deletecollection": "Delete",
}
Span = Any  # OpenTelemetry's span (its API's ``Span`` lacks the SDK's attributes)


class _GoIds(RandomIdGenerator):
    """Random ids, as Go's SDK makes them, without saying so: Go's sends trace flags
    ``01`` where Python's would add W3C's random-trace-id bit (``03``)."""

    def is_trace_id_random(self) -> bool:
        return False


class Tracing:
    """The process's tracer provider and kube's spans (each worker process has its
    own, and exports its own spans)."""

    def __init__(
        self,
        config: TracingConfig,
        instance_id: str,
        reactor: Any,
        exporter: SpanExporter | None = None,
        *,
        constrained_impersonation: bool = True,
        fairness: bool = True,
    ) -> None:
        """``constrained_impersonation``: the gate of that name (kube names its
        impersonation filter after it); ``fairness``: whether priority and fairness is
        on (its filter is in the chain only then)."""
        self.config = config
        self.filters = {
            AUDIT: "audit",
            IMPERSONATION: "constrainedimpersonation"
            if constrained_impersonation
            else "impersonation",
            AUTHORIZATION: "authorization",
        }
        if fairness:
            self.filters[FAIRNESS] = "priorityandfairness"
        resource = Resource({"service.name": "apiserver", "service.instance.id": instance_id})
        # Roots are sampled in request_span, before any span is made (the SDK's ratio
        # sampler draws the same odds from the trace id, after making it: ~20 µs a
        # request); the rest follow their parent.
        self.provider = TracerProvider(
            sampler=ParentBased(ALWAYS_ON), resource=resource, id_generator=_GoIds()
        )
        self._export: ReactorSpanProcessor | None = None
        self._close: Callable[[], None] = lambda: None
        if exporter is None:
            send, self._close = otlp_sender(config.endpoint)
            self._export = ReactorSpanProcessor(reactor, send)
            self.provider.add_span_processor(self._export)
        else:  # the tests' in-memory exporter, each span exported as it ends
            self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        self.http_tracer = self.provider.get_tracer(*HTTP_SCOPE)
        self.component_tracer = self.provider.get_tracer(COMPONENT_SCOPE)
        self.filter_tracer = self.provider.get_tracer(FILTER_SCOPE)
        self.grpc_tracer = self.provider.get_tracer(GRPC_SCOPE)
        self.propagator = CompositePropagator(
            [TraceContextTextMapPropagator(), W3CBaggagePropagator()]
        )

    def _sampled(self) -> bool:
        """A new trace's draw: kube's ratio sampler, ``samplingRatePerMillion`` in a million."""
        ratio = self.config.ratio
        return ratio >= 1 or (ratio > 0 and random.random() < ratio)

    async def close(self) -> None:
        """The last spans exported (at stop)."""
        if self._export is not None:
            await self._export.flush()
        self._close()

    # -- the request's span -----------------------------------------------------------

    def request_span(
        self, request: Request, info: requestinfo.RequestInfo, user: UserInfo, started: int
    ) -> RequestTrace | None:
        """otelhttp's server span for ``request``, ended when its response is; None when
        it could not be sampled (no rate, and no caller's trace to follow).  kube's
        authentication filter span began at ``started`` (ns), before the tracing filter
        read the caller's trace: the server span's parent, unless the caller's trace is
        or a new root is."""
        authn = self._authentication_span(request, started)
        headers = carrier(request)
        context = self.propagator.extract(headers) if headers else OtelContext()  # not the thread's
        remote = trace.get_current_span(context).get_span_context()
        links = []
        if not any(group in PRIVILEGED for group in user.groups):
            if remote.is_valid and remote.is_remote:
                links.append(trace.Link(remote))
            context = trace.set_span_in_context(trace.INVALID_SPAN, context)  # a new root
            drawn = self._sampled()
        elif remote.is_valid:
            drawn = True  # the caller's trace decides
        else:
            drawn = authn is not None
            if drawn:
                context = trace.set_span_in_context(authn)
        span = None
        if drawn:  # a root not sampled makes no span at all
            span = self.http_tracer.start_span(
                span_name(request, info),
                context=context,
                kind=trace.SpanKind.SERVER,
                links=links,
                start_time=time.time_ns(),
            )
        if span is None or not span.is_recording():  # not sampled: no attributes gathered
            if authn is not None:
                request.notifyFinish().addBoth(lambda _: authn.end())
            return None
        span.set_attributes(request_attributes(request))
        traced = RequestTrace(self, span, audit_id(request), authn)
        setattr(request, TRACE_ATTRIBUTE, traced)
        traced.enter(AUDIT)
        request.notifyFinish().addBoth(lambda _: traced.finished(request))
        return traced

    def unauthenticated(self, request: Request, started: int) -> None:
        """kube's authentication filter span of a request it refused, when drawn."""
        authn = self._authentication_span(request, started)
        if authn is not None:
            setattr(request, TRACE_ATTRIBUTE, RefusedTrace(self, authn, audit_id(request)))
            request.notifyFinish().addBoth(lambda _: authn.end())

    def _authentication_span(self, request: Request, started: int) -> Span:
        """A root of its own (no caller's trace is read yet), drawn at the rate; None
        when not drawn."""
        if not self._sampled():
            return None
        return self.filter_tracer.start_span(
            "authentication", context=OtelContext(), start_time=started
        )


class _Spans:
    """What a request's trace opens under its current span: component-base's spans, and
    the response writer's (``platform_api.context.Trace``)."""

    _tracing: Tracing
    current: Span
    audit_id: str

    def child(self, name: str, attributes: dict[str, Any], parent: Span = None) -> Span:
        """A span under ``parent``, else the current one (component-base's
        ``tracing.Start``); the caller ends it."""
        context = trace.set_span_in_context(self.current if parent is None else parent)
        return self._tracing.component_tracer.start_span(
            name, context=context, attributes=attributes
        )

    def serialized(
        self, request: Request, media: str, encoder: str, writer: str, size: int
    ) -> None:
        """responsewriters.SerializeObject's span (endpoints/serializespan.py works out
        what it says), opened and ended as the body goes out: this server writes the
        body in one piece, so the first write is the whole of it."""
        span = self.child("SerializeObject", serialize_fields(request, media, encoder))
        span.add_event("About to start writing response", {"writer": writer, "size": size})
        span.add_event("Write call succeeded", {"size": size})
        span.end()


class RequestTrace(_Spans):
    """One traced request: where its spans go (``platform_api.context.Trace``)."""

    def __init__(
        self, tracing: Tracing, span: Span, audit_id: str = "", authn: Span = None
    ) -> None:
        self._tracing = tracing
        self._server = span
        self._authn = authn  # kube's authentication filter span, when drawn
        self._filters: list[Span] = []  # the filters' spans entered, outermost first
        self.audit_id = audit_id  # truncated as kube's span attributes carry it
        self._handler: Span = None
        self.current = span  # the innermost open span: the handler's while it runs
        self.handler_version: str | None = None  # the handler's endpoint, while it runs
        self.authenticating = False

    def enter(self, stage: str) -> None:
        """The request enters one of the filters inside kube's tracing filter (AUDIT,
        ...): its filterlatency span opens under the current one and is current, until
        the response ends it.  A filter kube's chain has not (priority and fairness
        off) opens none."""
        name = self._tracing.filters.get(stage)
        if name is not None and self._handler is None:
            context = trace.set_span_in_context(self.current)
            self.current = self._tracing.filter_tracer.start_span(name, context=context)
            self._filters.append(self.current)

    def grpc_call(self, method: str, host: str, port: int, parent: Span = None) -> GrpcCallSpan:
        """otelgrpc's client span of a call the request's storage makes, under
        ``parent`` (its open storage span), else the current one."""
        tracer = self._tracing.grpc_tracer
        return GrpcCallSpan(tracer, self.current if parent is None else parent, method, host, port)

    def handler(self, request: Request, info: requestinfo.RequestInfo) -> Span:
        """The verb handler's span (kube's ``traceFields``), now the current one, ended
        with the response; None for verbs kube's handlers do not trace (watch, connect)."""
        name = HANDLER_SPANS.get(info.verb)
        if name is None:
            return None
        self._handler = self.current = self.child(name, handler_fields(request, info))
        self.handler_version = endpoint_version(info)
        return self._handler

    def event(self, name: str, attributes: dict[str, Any]) -> None:
        """One of kube's handler span events (``About to store object in database``)."""
        if self._handler is not None:
            self._handler.add_event(name, attributes)

    @property
    def writes_response_events(self) -> bool:
        """Whether the handler tells of writing its answer: kube's object handlers do,
        its list handler does not."""
        return self._handler is not None and self._handler.name != "List"

    def end_handler(self) -> None:
        if self._handler is not None:
            self._handler.end()
            self._handler = None
            self.handler_version = None
            self.current = self._filters[-1] if self._filters else self._server

    def finished(self, request: Request) -> None:
        """The response is sent: the handler's span ends, the filters' inside out, the
        server span, and last the authentication filter's."""
        self.end_handler()
        for span in reversed(self._filters):
            span.end()
        self._filters.clear()
        self.current = self._server
        self._end_server(request)
        if self._authn is not None:
            self._authn.end()

    def _end_server(self, request: Request) -> None:
        span, code = self._server, request.code
        if code >= 500:
            span.set_status(Status(StatusCode.ERROR))
        received = getattr(request, "_received", 0)
        if received:
            span.set_attribute("http.request.body.size", received)
        if request.sentLength:
            span.set_attribute("http.response.body.size", request.sentLength)
        span.set_attribute("http.response.status_code", code)
        span.end()

    def outgoing(self, parent: Span, method: str, url: str) -> tuple[Span, dict[str, str]]:
        """otelhttp's transport span for a call made under ``parent``, and the headers
        that carry its context to the callee."""
        host, _, port = url.partition("://")[2].partition("/")[0].rpartition(":")
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "url.full": url,
            "server.address": host or port,
        }
        if host and port.isdigit() and port != "443":
            attributes["server.port"] = int(port)
        span = self._tracing.http_tracer.start_span(
            f"HTTP {method}",
            context=trace.set_span_in_context(parent),
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        headers: dict[str, str] = {}
        self._tracing.propagator.inject(headers, context=trace.set_span_in_context(span))
        return span, headers


class RefusedTrace(_Spans):
    """A request authentication refused: only kube's authentication filter span, under
    which the refusal is written."""

    handler_version = None
    authenticating = True

    def __init__(self, tracing: Tracing, authn: Span, audit_id: str) -> None:
        self._tracing, self.current, self.audit_id = tracing, authn, audit_id


# Sub-resources whose endpoint serves a kind of another group version.
_SUBRESOURCE_VERSIONS = {"scale": "autoscaling/v1", "eviction": "policy/v1"}


def endpoint_version(info: requestinfo.RequestInfo) -> str:
    """The group version kube's handler scope encodes in (its Status errors too)."""
    if info.subresource in _SUBRESOURCE_VERSIONS:
        return _SUBRESOURCE_VERSIONS[info.subresource]
    group = info.requested_group or info.api_group
    return f"{group}/{info.api_version}" if group else info.api_version
