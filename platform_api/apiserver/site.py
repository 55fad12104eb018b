"""The HTTP face of the server: kube's filter chain in front of the handlers.

Order as ``DefaultBuildHandlerChain``: recover from errors, parse the request info,
authenticate (401), limit requests in flight (429), authorize (403), then route: a
resource request goes to its handler (the request info has routed it), everything else
(discovery, health, OpenAPI, metrics, ...) through Klein's routes (``routes.py``).  A request that is not
long-running gets ``--request-timeout`` to finish (504).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_to_bytes

from prometheus_client.registry import Collector
from twisted.internet.defer import CancelledError, Deferred, ensureDeferred
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request

from platform_api import errors
from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.remote import Backend, RemoteAPIServices, unavailable
from platform_api.apiserver import requestinfo, requestline, requestmetrics
from platform_api.apiserver.audit.hook import Auditor, audit_id, authorization_annotations
from platform_api.apiserver.browserheaders import BrowserHeaders
from platform_api.apiserver.discovery import Discovery
from platform_api.apiserver.health import HealthEndpoint
from platform_api.apiserver.inflight import InflightLimiter
from platform_api.apiserver.openapi import OpenAPI
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.apiserver.routes import CONTEXT_ATTRIBUTE, Routes, restful, routed_segments
from platform_api.authentication.impersonation import impersonate
from platform_api.authentication.union import RequestAuthenticator, notes_of
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, Decision
from platform_api.authorization.union import forbidden
from platform_api.context import AUTHORIZATION, FAIRNESS, IMPERSONATION, Context
from platform_api.endpoints import dispatch
from platform_api.endpoints.responses import (
    CBOR_ATTRIBUTE,
    COMPRESSION_ATTRIBUTE,
    status_error,
    write_error,
)
from platform_api.endpoints.scope import Handlers
from platform_api.goduration import parse_duration
from platform_api.storage import spans

if TYPE_CHECKING:  # the SDK is imported only when --tracing-config-file is given
    from platform_api.apiserver.tracing import RequestTrace, Tracing

log = Logger()
_INFO = "_platform_info"
_TIMEOUT = "_platform_timeout"
WRITE_TIMEOUT = 34.0  # kube's write handlers' default deadline
_WRITES = frozenset(("create", "update", "patch", "delete", "deletecollection"))


@dataclass
class Filters:
    authenticator: RequestAuthenticator
    authorizer: Authorizer
    inflight: InflightLimiter
    request_timeout: float
    reactor: IReactorTime
    audit: Auditor | None = None  # --audit-policy-file with a backend
    # --workers: bring this worker's in-memory state (watch hub, RBAC index, served custom
    # types) up to the newest revision any worker committed, before serving.
    catch_up: Callable[[], None] | None = None
    # --workers: every worker's samples merged, for /metrics (workermetrics.py).
    gather_metrics: Callable[[], Awaitable[Collector]] | None = None
    # --workers: ``DELETE /metrics`` resets every worker's counters, not one's.
    reset_metrics: Callable[[bool], None] | None = None  # True: /metrics/slis
    # Group versions of aggregated API servers (APIServices naming a Service).
    remote_apiservices: RemoteAPIServices | None = None
    aggregator_proxy: AggregatorProxy | None = None
    # --strict-transport-security-directives, --cors-allowed-origins
    browser: BrowserHeaders | None = None
    tracing: Tracing | None = None  # --tracing-config-file (imported only then)


class APIServer:
    """The chain and the routes behind it; ``resource()`` is the site root."""

    def __init__(
        self,
        filters: Filters,
        handlers: Handlers,
        discovery: Discovery,
        openapi: OpenAPI,
        health: dict[str, HealthEndpoint],
    ) -> None:
        self.filters = filters
        self.handlers = handlers
        routes = Routes(
            handlers, discovery, openapi, health, filters.gather_metrics, filters.reset_metrics
        )
        self._routes = routes.app.resource()

    def resource(self) -> Resource:
        return _Root(self)

    # -- the chain ----------------------------------------------------------------------

    async def serve(self, request: Request) -> None:
        ctx: Context | None = None
        setattr(request, CBOR_ATTRIBUTE, self.handlers.cbor)
        if not self.handlers.compression:
            setattr(request, COMPRESSION_ATTRIBUTE, False)
        if self.filters.catch_up is not None:
            self.filters.catch_up()
        request.setHeader(b"audit-id", audit_id(request))  # kube's outermost filter
        browser = self.filters.browser
        if browser is not None:  # outside authentication, as kube's filters are
            origin = request.getHeader(b"origin")
            if browser.apply(request.method, origin, request.setHeader):
                request.setResponseCode(204)  # a preflight of an allowed origin
                request.finish()
                return
        try:
            request.args = requestline.query_args(request.uri.partition(b"?")[2])
            path = request.path.decode("utf-8", "replace")
            try:
                info = requestinfo.parse(request.method, path, request.args)
            except requestinfo.RequestInfoError:
                _no_request_info(request)
                return
            self._canonical_group(info)
            if not info.long_running:  # before authentication, as kube's deadline filter
                setattr(request, _TIMEOUT, _asked_timeout(request.args))
            user, traced = await self._authenticate(request, path, info)
            enter = traced.enter if traced is not None else _untraced
            audit = self.filters.audit and self.filters.audit.begin(request, info, user)
            enter(IMPERSONATION)
            try:
                user = await impersonate(request.requestHeaders, user, self.filters.authorizer)
            except errors.StatusError as e:
                raise errors.filter_refusal(e) from None
            ctx = _context(request, user, info)
            ctx.trace = traced
            if traced is not None:
                spans.TRACE.set(traced)  # this request's coroutines only (storage/spans.py)
            if audit:
                audit.attach(ctx)
            enter(FAIRNESS)
            async with self.filters.inflight.admit(request, info, user) as started:
                ctx.watch_initialized = started
                enter(AUTHORIZATION)
                attrs = Attributes.from_request(user, info)
                decision, reason = await self.filters.authorizer.authorize(attrs)
                authorization_annotations(ctx, decision is Decision.ALLOW, reason)
                if decision is not Decision.ALLOW:
                    raise errors.filter_refusal(forbidden(attrs, reason))
                setattr(request, CONTEXT_ATTRIBUTE, ctx)
                setattr(request, _INFO, info)
                requestmetrics.track(request, info)
                await self._route(request, info, user)
        except errors.StatusError as e:
            write_error(request, e, ctx)
        except Exception:
            log.failure("unhandled error serving {path}", path=request.path)
            write_error(request, errors.internal_error("an unexpected error occurred"), ctx)

    async def _route(self, request: Request, info: RequestInfo, user: UserInfo) -> None:
        """Past the filters: to an aggregated server, a resource handler, or Klein."""
        if info.is_resource and not restful(unquote_to_bytes(request.path)):
            # kube's RequestInfo strips the slashes (``//api/v1/pods`` was authorized as
            # a list of pods), but its director hands a path to the resource handlers
            # only under a web service's root: Go's text 404 for the rest.
            raise errors.page_not_found()
        backend = self._aggregated(info)
        if backend is not None:
            ctx = getattr(request, CONTEXT_ATTRIBUTE)
            ctx.watch_started()  # kube's RequestDelegated: the seats are not held meanwhile
            proxy = self.filters.aggregator_proxy
            if proxy is None or not backend.available:
                unavailable(request)
            else:
                await proxy.forward(request, user, backend)
            return
        if info.is_resource:
            await self._serve_resource(request)
            return
        segments = routed_segments(request.path)
        if segments is None:
            raise errors.page_not_found()
        finished = request.notifyFinish()
        request.postpath = segments
        self._routes.render(request)  # Klein routes by the path's segments
        with contextlib.suppress(Exception):  # the client went away: handler cancelled
            await finished

    async def _authenticate(
        self, request: Request, path: str, info: RequestInfo
    ) -> tuple[UserInfo, RequestTrace | None]:
        """kube's authentication filter, and inside it its tracing filter (the request's
        spans, when traced)."""
        tracing = self.filters.tracing
        if tracing is None:
            return await self.filters.authenticator.authenticate(request, path), None
        started = time.time_ns()
        try:
            user = await self.filters.authenticator.authenticate(request, path)
        except errors.StatusError:
            tracing.unauthenticated(request, started)
            raise
        return user, tracing.request_span(request, info, user, started)

    def _aggregated(self, info: RequestInfo) -> Backend | None:
        """The aggregated server an APIService gives the request's group version to
        (None for one served here)."""
        remote = self.filters.remote_apiservices
        if remote is None or info.api_prefix != "apis":
            return None
        group, version = info.requested_group or info.api_group, info.api_version
        if not info.is_resource:  # /apis/<group>/<version>: the version's discovery
            parts = info.path.strip("/").split("/")
            if len(parts) != 3:
                return None
            group, version = parts[1], parts[2]
        backend = remote.backend(group, version)
        if backend is None or version in self.handlers.scheme.versions(info.api_group or group):
            return None
        return backend

    def _canonical_group(self, info: RequestInfo) -> None:
        """An upstream group name in the path is served by its branded group."""
        aliases = self.handlers.aliases
        branded = aliases.branded(info.api_group) if aliases is not None else ""
        if branded:
            info.requested_group, info.api_group = info.api_group, branded

    # -- resources ------------------------------------------------------------------------

    async def _serve_resource(self, request: Request) -> None:
        """A resource request, routed already by ``requestinfo``: straight to its handler
        rather than through Klein's second match of the same path (~10% of a GET).  The
        handler is cancelled if the client goes away, as Klein cancels its routes."""
        info: RequestInfo = getattr(request, _INFO)
        ctx: Context = getattr(request, CONTEXT_ATTRIBUTE)
        work = ensureDeferred(dispatch.serve(request, info, ctx, self.handlers))
        request.notifyFinish().addErrback(lambda _: work.cancel())
        try:
            if info.long_running:
                body = await work
            else:
                asked = getattr(request, _TIMEOUT, 0.0)
                seconds, timed_out = deadline(info.verb, asked, self.filters.request_timeout)
                body = await _with_timeout(work, seconds, self.filters.reactor, timed_out)
        except CancelledError:  # the client went away
            return
        if getattr(request, "_disconnected", False) or request.finished:
            return
        if body:
            request.write(body)
        request.finish()


def _untraced(stage: str) -> None:
    """``RequestTrace.enter`` for a request that is not traced."""


def _no_request_info(request: Request) -> None:
    """kube's RequestInfo filter refusing a path it cannot read (``/api/v1/watch`` names
    no resource): Go's ``http.Error``, a 500 in plain text, written before kube's
    cache-control filter sets its header."""
    uri = request.uri.decode("utf-8", "replace")
    error = errors.request_info_failed(
        uri, f"unable to determine kind and namespace from url, {uri}"
    )
    body = status_error(request, error)
    request.responseHeaders.removeHeader(b"cache-control")
    request.write(body)
    request.finish()


def _asked_timeout(args: dict[bytes, list[bytes]]) -> float:
    """``?timeout=`` in seconds (kubectl's --request-timeout sends it), 0 when none; one
    that does not parse is kube's 400, before authentication."""
    raw = args.get(b"timeout", [b""])[0].decode("utf-8", "surrogateescape")  # Go: bytes
    if not raw:
        return 0.0
    try:
        return parse_duration(raw) / 1e9
    except ValueError as e:
        raise errors.bad_request(f"invalid timeout specified in the request URL - {e}") from None


def deadline(
    verb: str, asked: float, limit: float
) -> tuple[float, Callable[[], errors.StatusError]]:
    """How long a request may run, and its answer when it runs out: the timeout filter's
    at the request's deadline (``asked`` when shorter than --request-timeout's ``limit``;
    0 or less means the limit), or a write handler's at its own deadline when that is
    sooner (``asked``, else kube's 34 s: parseTimeout; at the same moment kube's filter
    answers first)."""
    outer = asked if 0 < asked < limit else limit
    if verb not in _WRITES:
        return outer, errors.request_timed_out
    own = asked if asked > 0 else WRITE_TIMEOUT
    return (own, errors.write_timed_out) if own < outer else (outer, errors.request_timed_out)


async def _with_timeout(
    work: Deferred[Any],
    seconds: float,
    reactor: IReactorTime,
    timed_out: Callable[[], errors.StatusError] = errors.request_timed_out,
) -> Any:
    """``work``'s result, or ``timed_out()`` (kube's 504 Timeout) after ``seconds`` (the
    work is cancelled)."""
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        work.cancel()

    timer = reactor.callLater(seconds, expire)
    try:
        return await work
    except CancelledError:
        if expired:
            raise timed_out() from None
        raise
    finally:
        if timer.active():
            timer.cancel()


class _Root(Resource):
    """The site root: every request enters the chain."""

    isLeaf = True

    def __init__(self, server: APIServer) -> None:
        super().__init__()
        self.api = server

    def render(self, request: Request) -> Any:
        ensureDeferred(self.api.serve(request))
        return NOT_DONE_YET


def _context(request: Request, user: UserInfo, info: requestinfo.RequestInfo) -> Context:
    """The request's Context, with what authentication had to say (a token's warning)."""
    ctx = Context(user, render_group=info.requested_group)
    warnings, annotations = notes_of(request)
    for text in warnings:
        ctx.warn(text)
    for key, value in annotations:
        ctx.annotate(key, value)
    return ctx
