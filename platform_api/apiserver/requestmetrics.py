"""Per-request families of kube's endpoints/metrics: counts, latency, sizes, long-running.

``track`` is called once per request that reached the routes (authenticated and
authorized, as kube's ``InstrumentRouteFunc`` wraps only the routes); it records when
the response finishes, so a watch counts as long-running while open and lands in
``apiserver_request_total`` when it ends, as in kube.  Verb and scope follow kube's
``cleanVerb``/``CleanScope``: ``LIST``, ``WATCH``, ``APPLY``, ``POST`` for create.
"""

from __future__ import annotations

import os
import time
from typing import Any
from urllib.parse import parse_qs

from prometheus_client import Counter, Gauge
from twisted.web.server import Request

from platform_api.apiserver.inflight import InflightLimiter
from platform_api.apiserver.metrics import (
    LATENCY_BUCKETS,
    REGISTRY,
    Children,
    ReactorCounter,
    ReactorHistogram,
)
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.context import track_webhook_wait

COMPONENT = "apiserver"
_REQUEST = ["component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version"]

REQUESTS = ReactorCounter(
    "apiserver_request_total",
    "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, "
    "version, resource, scope, component, and HTTP response code.",
    sorted([*_REQUEST, "code", "system_client"]),
    REGISTRY,
)
LATENCY = ReactorHistogram(
    "apiserver_request_duration_seconds",
    "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, "
    "version, resource, subresource, scope and component.",
    _REQUEST,
    LATENCY_BUCKETS,
    REGISTRY,
)
_SIZE_LABELS = ["component", "group", "resource", "scope", "subresource", "verb", "version"]
RESPONSE_SIZES = ReactorHistogram(
    "apiserver_response_sizes",
    "[STABLE] Response size distribution in bytes for each group, version, verb, resource, "
    "subresource, scope and component.",
    _SIZE_LABELS,
    tuple(1000.0 * 10**i for i in range(7)),
    REGISTRY,
)
LONGRUNNING = Gauge(
    "apiserver_longrunning_requests",
    "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, "
    "version, resource, scope and component. Not all requests are tracked this way.",
    _SIZE_LABELS,
    registry=REGISTRY,
)
SLI_LATENCY = ReactorHistogram(
    "apiserver_request_sli_duration_seconds",
    "[ALPHA] Response latency distribution (not counting webhook duration and priority & "
    "fairness queue wait times) in seconds for each verb, group, version, resource, "
    "subresource, scope and component.",
    _SIZE_LABELS,
    (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60),
    REGISTRY,
)
INFLIGHT = Gauge(
    "apiserver_current_inflight_requests",
    "[STABLE] Maximal number of currently used inflight request limit of this apiserver per "
    "request kind in last second.",
    ["request_kind"],
    registry=REGISTRY,
)
TERMINATIONS = Counter(
    "apiserver_request_terminations_total",
    "[ALPHA] Number of requests which apiserver terminated in self-defense.",
    sorted([*_SIZE_LABELS, "code"]),
    registry=REGISTRY,
)
_longrunning = Children(LONGRUNNING)

_VALID = {"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH"}
_VALID |= {"POST", "PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST"}
_CONNECT = {"log", "exec", "portforward", "attach", "proxy"}
_SYSTEM_CLIENTS = {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
_SYSTEM_CLIENTS |= {"cluster-policy-controller", "platform-apiserver"}
_SYSTEM_CLIENTS |= {"platform-controller-manager", "platform-scheduler"}
_HEALTH = ("/healthz", "/livez", "/readyz")
# A refused request has no response to read its method from: its verb, as kube reports it.
_REPORTED = {"create": "POST", "update": "PUT", "deletecollection": "DELETE"}
# benchmarks/metricsbench.py starts a server with this set to measure what the metrics cost.
ENABLED = os.environ.get("PLATFORM_APISERVER_BENCH_NO_METRICS") != "1"


def clean_scope(info: RequestInfo) -> str:
    if info.name or info.verb == "create":
        return "resource"
    if info.namespace:
        return "namespace"
    return "cluster" if info.is_resource else ""


def clean_verb(request: Request, info: RequestInfo, scope: str) -> str:
    """kube's reported verb: the HTTP method made canonical, WATCH, APPLY, CONNECT."""
    method = request.method.decode("latin-1").upper()
    if info.verb == "watch":
        return "WATCH"
    if method in ("GET", "HEAD"):
        method = "LIST" if scope not in ("resource", "") else "GET"
    content_type = request.getHeader("content-type")
    if method == "PATCH" and content_type == "application/apply-patch+yaml":
        method = "APPLY"
    if info.is_resource and info.subresource in _CONNECT:
        method = "CONNECT"
    return method if method in _VALID else "other"


def clean_dry_run(uri: bytes) -> str:
    if b"dryRun" not in uri:
        return ""
    query = uri.partition(b"?")[2].decode("latin-1")
    values = parse_qs(query, keep_blank_values=True).get("dryRun", [])  # "?dryRun" is [""]
    if any(v != "All" for v in values):
        return "invalid"
    return ",".join(sorted(set(values)))


def track(request: Request, info: RequestInfo) -> None:
    """Record ``request`` in the request families once its response is finished."""
    if not ENABLED:
        return
    if info.is_resource:
        scope = clean_scope(info)
        verb = clean_verb(request, info, scope)
        group, resource, sub, version = (
            info.api_group,
            info.resource,
            info.subresource,
            info.api_version,
        )
        labels = (COMPONENT, group, resource, scope, sub, verb, version)
    elif request.method == b"GET" and info.path.rstrip("/") in _HEALTH:
        # kube instruments its health endpoints with the path as subresource, no component.
        labels = ("", "", "", "", info.path.rstrip("/"), "GET", "")
    else:
        return
    started = time.perf_counter()  # after priority and fairness: its wait is not in it
    gauge = _longrunning(*labels) if info.long_running else None
    if gauge is not None:
        gauge.inc()
    waited = track_webhook_wait()
    request.notifyFinish().addBoth(_finished, request, labels, started, gauge, waited)


def _finished(
    result: Any,
    request: Request,
    labels: tuple[str, ...],
    started: float,
    gauge: Any,
    waited: list[float],
) -> None:
    if gauge is not None:
        gauge.dec()
    component, group, resource, scope, sub, verb, version = labels
    dry_run = clean_dry_run(request.uri)
    agent = (request.getHeader("user-agent") or "").split("/", 1)
    client = agent[0] if len(agent) > 1 and agent[0] in _SYSTEM_CLIENTS else ""
    code = str(request.code)
    REQUESTS.inc(code, component, dry_run, group, resource, scope, sub, client, verb, version)
    elapsed = time.perf_counter() - started
    LATENCY.observe(elapsed, component, dry_run, group, resource, scope, sub, verb, version)
    if not dry_run:  # kube's SLI: a real request's time apart from its webhooks'
        SLI_LATENCY.observe(elapsed - waited[0], *labels)
    if verb in ("GET", "LIST"):
        RESPONSE_SIZES.observe(request.sentLength, *labels)


def watch_inflight(current: dict[bool, int]) -> None:
    """Read the in-flight gauge from the limiter's counts (keyed by "mutating") at scrape."""
    INFLIGHT.labels(request_kind="readOnly").set_function(lambda: current[False])
    INFLIGHT.labels(request_kind="mutating").set_function(lambda: current[True])


def count_dropped(limiter: InflightLimiter) -> None:
    """Count the limiter's 429s as kube's max-in-flight filter does (request_total with
    code 429, and a termination)."""
    limiter.on_reject = _dropped


def _dropped(info: RequestInfo) -> None:
    scope = clean_scope(info)
    verb = _REPORTED.get(info.verb, info.verb.upper())
    if verb == "GET" and scope not in ("resource", ""):
        verb = "LIST"
    group, resource, version = info.api_group, info.resource, info.api_version
    values = (COMPONENT, "", group, resource, scope, info.subresource, "", verb, version)
    REQUESTS.inc("429", *values)
    sub = info.subresource if info.is_resource else info.path  # kube: the path, here only
    TERMINATIONS.labels("429", COMPONENT, group, resource, scope, sub, verb, version).inc()
