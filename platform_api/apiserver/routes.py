"""The paths that are not resources: discovery, version, health, OpenAPI, metrics, the
service-account issuer's documents and ``/``, routed by Klein.

They are reached only through the filter chain (``site.py``), which has authenticated
and authorized the request and set its Context on it; a resource request never gets
here (``requestinfo`` has routed it already).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import unquote_to_bytes

import orjson
from klein import Klein
from prometheus_client.registry import Collector
from twisted.internet.defer import CancelledError, Deferred, ensureDeferred
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.server import Request
from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.routing import BaseConverter

from platform_api import errors
from platform_api.apiserver import flagz, metrics, slis, statusz
from platform_api.apiserver.discovery import Discovery, version_info
from platform_api.apiserver.health import HealthEndpoint
from platform_api.apiserver.openapi import OpenAPI
from platform_api.endpoints.negotiation import VERSION_PRODUCES, check_produces
from platform_api.endpoints.responses import encode, finish, status_error
from platform_api.endpoints.scope import Handlers

log = Logger()
CONTEXT_ATTRIBUTE = "_platform_context"  # the request's Context, set by the chain
# The roots of kube's go-restful web services among the paths routed here.
_RESTFUL_ROOTS = (b"/version", b"/api", b"/.well-known/openid-configuration", b"/openid/v1/jwks")


def restful(path: bytes) -> bool:
    """Whether kube's director hands ``path`` to its go-restful container rather than to
    its plain muxes: a web service's root or a path below it (a group's below
    ``/apis/<group>``).  go-restful trims a path's trailing slashes before matching it
    and answers a miss with a Status; the plain muxes match exact paths and answer a miss
    with Go's text 404."""
    if any(path == root or path.startswith(root + b"/") for root in _RESTFUL_ROOTS):
        return True
    parts = path.split(b"/", 3)
    return len(parts) == 4 and parts[1] == b"apis" and parts[2] != b""


def routed_segments(path: bytes) -> list[bytes] | None:
    """The path's segments as kube matches them (``request.postpath`` for Klein): Go's
    muxes match the decoded path, so ``/%2Fversion`` is ``//version``.  None when no
    route of kube's can match it: a path starting with ``//`` is under no root (Klein
    would match it as if it had one slash), and an empty one (``GET https://host``) or
    ``*`` is no path at all."""
    decoded = unquote_to_bytes(path)
    if not decoded.startswith(b"/") or decoded.startswith(b"//"):
        return None
    segments = decoded[1:].split(b"/")
    if restful(decoded):
        while len(segments) > 1 and not segments[-1]:
            segments.pop()
    return segments


class _Rest(BaseConverter):
    """The rest of the path, whatever it is (Werkzeug's ``path`` will not start with a
    slash): kube-openapi's handler owns every path under ``/openapi/v3/``."""

    regex = ".*"
    part_isolating = False


class Routes:
    """Klein's routes behind the chain; ``app.resource()`` renders them."""

    app = Klein()
    # kube's muxes match paths as they come: Werkzeug would merge repeated slashes.
    app.url_map.merge_slashes = False
    app.url_map.converters["rest"] = _Rest

    def __init__(
        self,
        handlers: Handlers,
        discovery: Discovery,
        openapi: OpenAPI,
        health: dict[str, HealthEndpoint],
        gather_metrics: Callable[[], Awaitable[Collector]] | None = None,
        reset_metrics: Callable[[bool], None] | None = None,
    ) -> None:
        self.handlers = handlers
        self.discovery = discovery
        self.openapi = openapi
        self.health = health
        self.gather_metrics = gather_metrics  # --workers: every worker's samples merged
        self.reset_metrics = reset_metrics  # --workers: reset every worker's counters
        self.flagz = flagz.FlagzPage(handlers.flags)

    # Routes without ``methods`` answer every method as GET, as kube's plain handlers do
    # (``/``, ``/apis``, ``/apis/<g>``, health, OpenAPI, ``/metrics``); its go-restful
    # routes (``/api...``, ``/apis/<g>/<v>``, ``/version``, the issuer documents) take
    # GET only, spelt so, and no HEAD.  A version nothing serves is no route at all
    # there: every method is told 404, so discovery checks the method itself.
    @app.route("/api")
    @app.route("/api/")
    @app.route("/api/v1")
    @app.route("/apis/<group>/<version>")
    @app.route("/api/v1/")
    @app.route("/apis/<group>/<version>/")
    def discover_versions(self, request: Request, **_: str) -> bytes:
        path = request.path.decode()
        if request.method != b"GET" and self.discovery.serves(path):
            raise errors.method_not_allowed()
        return self.discovery.render(request, path)

    @app.route("/apis")
    @app.route("/apis/")
    @app.route("/apis/<group>")
    @app.route("/apis/<group>/")
    def discover_groups(self, request: Request, **_: str) -> bytes:
        return self.discovery.render(request, request.path.decode())

    @app.route("/version", methods=["GET"])
    @app.route("/version/", methods=["GET"])
    def version(self, request: Request) -> bytes:
        _get_only(request)
        check_produces((request.getHeader(b"accept") or b"").decode("latin-1"), VERSION_PRODUCES)
        return finish(request, 200, encode(version_info(), pretty=True), b"application/json")

    @app.route("/healthz")
    @app.route("/livez")
    @app.route("/readyz")
    def health_all(self, request: Request) -> bytes:
        return self.health[request.path.decode().strip("/")].render_all(request)

    @app.route("/healthz/<path:check>")
    @app.route("/livez/<path:check>")
    @app.route("/readyz/<path:check>")
    def health_one(self, request: Request, check: str) -> bytes:
        endpoint = request.path.decode().strip("/").split("/", 1)[0]
        return self.health[endpoint].render_one(request, check)

    @app.route("/openapi/v2")
    @app.route("/openapi/v3")
    @app.route("/openapi/v3/<rest:_key>")
    def openapi_documents(self, request: Request, **_: str) -> bytes | Deferred[bytes]:
        return self.openapi.render(request, request.path.decode())

    @app.route("/metrics")
    @app.route("/metrics/slis")
    def metrics(self, request: Request) -> bytes | Deferred[bytes]:
        part = request.path == b"/metrics/slis"
        if request.method == b"DELETE":  # kube's MetricsWithReset (--profiling, its default)
            (slis.SLIS.reset if part else metrics.reset)()
            if self.reset_metrics is not None:
                self.reset_metrics(part)
            return finish(request, 200, b"metrics reset\n", b"text/plain; charset=utf-8")
        accept = request.getHeader("accept") or ""
        request.setHeader(b"process-start-time-unix", b"%d" % metrics.start_time())
        if self.gather_metrics is None:
            body, content_type = metrics.render(accept, slis.for_path(metrics.REGISTRY, part))
            return finish(request, 200, body, content_type)
        return ensureDeferred(self._all_workers_metrics(request, accept, part))

    async def _all_workers_metrics(self, request: Request, accept: str, part: bool) -> bytes:
        assert self.gather_metrics is not None
        merged = await self.gather_metrics()
        body, content_type = metrics.render(accept, slis.for_path(merged, part))
        return finish(request, 200, body, content_type)

    @app.route("/.well-known/openid-configuration", methods=["GET"])
    @app.route("/.well-known/openid-configuration/", methods=["GET"])
    @app.route("/openid/v1/jwks", methods=["GET"])
    @app.route("/openid/v1/jwks/", methods=["GET"])
    def issuer_documents(self, request: Request) -> bytes:
        """The service-account issuer's OpenID discovery document and signing keys (with a
        trailing slash too, as kube serves them and its OpenAPI names them)."""
        _get_only(request)
        accounts = self.handlers.service_accounts
        if accounts is None:
            raise errors.path_not_found()
        wanted = request.path.decode().rstrip("/")
        doc = accounts.jwks() if wanted.endswith("jwks") else accounts.discovery()
        media = b"application/jwk-set+json" if wanted.endswith("jwks") else b"application/json"
        # kube's: keys from files for an hour; an external signer's until its next refresh.
        cache = {"cache-control": f"public, max-age={accounts.keys.max_age()}"}
        return finish(request, 200, orjson.dumps(doc), media, headers=cache)  # no newline

    @app.route("/")
    def root_paths(self, request: Request) -> bytes:
        """Every path kube's muxes list: discovery, each health check's own, the
        documents, metrics and z-pages."""
        body = encode({"paths": self._listed()}, pretty=True)
        return finish(request, 200, body, b"application/json")

    @app.route("/statusz")
    def status_page(self, request: Request) -> bytes:
        if not self.handlers.statusz:  # kube installs no handler with its gate off
            raise errors.page_not_found()
        accept = (request.getHeader(b"accept") or b"").decode("latin-1")
        paths = statusz.debugging_paths(self._listed())
        body, content_type, warning = statusz.render(
            accept, metrics.start_time(), version_info(), paths
        )
        return _z_page(request, body, content_type, warning)

    @app.route("/flagz")
    def flags_page(self, request: Request) -> bytes:
        if not self.handlers.flagz:
            raise errors.page_not_found()
        accept = (request.getHeader(b"accept") or b"").decode("latin-1")
        return _z_page(request, *self.flagz.render(accept))

    def _listed(self) -> list[str]:
        paths = [
            *self.discovery.listed_paths(),
            "/version",
            "/.well-known/openid-configuration",
            "/openid/v1/jwks",
            "/metrics",
            "/metrics/slis",
            "/openapi/v2",
            "/openapi/v3",
            "/openapi/v3/",
            *(["/statusz"] if self.handlers.statusz else []),
            *(["/flagz"] if self.handlers.flagz else []),
        ]
        for name, endpoint in self.health.items():
            paths += [f"/{name}"] + [f"/{name}/{check.name}" for check in endpoint.checks]
        return sorted(paths)

    @app.handle_errors(errors.StatusError)  # type: ignore[arg-type]
    def status_error(self, request: Request, failure: Failure) -> bytes:
        error = failure.value
        assert isinstance(error, errors.StatusError)
        return status_error(request, error, getattr(request, CONTEXT_ATTRIBUTE, None))

    @app.handle_errors(HTTPException)  # type: ignore[arg-type]
    def routing_error(self, request: Request, failure: Failure) -> bytes:
        if isinstance(failure.value, MethodNotAllowed):
            return status_error(request, errors.method_not_allowed())
        if restful(request.path):
            return status_error(request, errors.path_not_found())
        return status_error(request, errors.page_not_found())

    @app.handle_errors(Exception)  # type: ignore[arg-type]
    def unexpected_error(self, request: Request, failure: Failure) -> bytes:
        if failure.check(CancelledError):
            return b""
        log.failure("unhandled error serving {path}", failure, path=request.path)
        ctx = getattr(request, CONTEXT_ATTRIBUTE, None)
        return status_error(request, errors.internal_error("an unexpected error occurred"), ctx)


def _z_page(request: Request, body: bytes, content_type: bytes, warning: bytes | None) -> bytes:
    headers = {"warning": warning.decode()} if warning is not None else None
    return finish(request, 200, body, content_type, headers=headers)


def _get_only(request: Request) -> None:
    """kube serves this path with go-restful, whose GET route takes neither HEAD nor a
    method spelt in another case (``get``): 405.  Werkzeug matched both as GET."""
    if request.method != b"GET":
        raise errors.method_not_allowed()
