"""Request instrumentation: kube's reported verb, scope, dry-run value, and the families."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred
from twisted.web.server import Request
from twisted.web.test.requesthelper import DummyChannel

from platform_api.apiserver import requestinfo, requestmetrics
from platform_api.apiserver.authmetrics import (
    AUTHENTICATED_USERS,
    AUTHN_ATTEMPTS,
    AUTHZ_ATTEMPTS,
    InstrumentedAuthenticator,
    InstrumentedAuthorizer,
    compress_username,
)
from platform_api.apiserver.inflight import InflightLimiter
from platform_api.apiserver.metrics import REGISTRY
from platform_api.authentication.union import Anonymous, RequestAuthenticator
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.union import AlwaysAllow, AlwaysDeny
from platform_api.context import add_webhook_wait
from platform_api.errors import StatusError


def _request(method: bytes, uri: str, content_type: str = "") -> Request:
    """A real twisted.web request over a test channel (its transport keeps the bytes)."""
    request = Request(DummyChannel())
    request.method = method
    request.uri = uri.encode()
    request.path = uri.partition("?")[0].encode()
    if content_type:
        request.requestHeaders.setRawHeaders(b"content-type", [content_type.encode()])
    return request


def _info(method: bytes, uri: str) -> requestinfo.RequestInfo:
    path, _, query = uri.partition("?")
    args = {k.encode(): [v.encode()] for k, v in (p.split("=") for p in query.split("&") if p)}
    return requestinfo.parse(method, path, args)


@pytest.mark.parametrize(
    ("method", "uri", "content_type", "verb", "scope"),
    [
        (b"GET", "/api/v1/namespaces/a/pods", "", "LIST", "namespace"),
        (b"GET", "/api/v1/pods", "", "LIST", "cluster"),
        (b"GET", "/api/v1/namespaces/a/pods/p", "", "GET", "resource"),
        (b"GET", "/api/v1/namespaces/a/pods?watch=true", "", "WATCH", "namespace"),
        (b"GET", "/api/v1/watch/namespaces/a/pods/p", "", "WATCH", "resource"),
        (b"POST", "/api/v1/namespaces/a/pods", "", "POST", "resource"),
        (b"PUT", "/api/v1/namespaces/a/pods/p/status", "", "PUT", "resource"),
        (
            b"PATCH",
            "/apis/apps/v1/namespaces/a/deployments/d",
            "application/merge-patch+json",
            "PATCH",
            "resource",
        ),
        (
            b"PATCH",
            "/apis/apps/v1/namespaces/a/deployments/d",
            "application/apply-patch+yaml",
            "APPLY",
            "resource",
        ),
        (b"DELETE", "/api/v1/namespaces/a/pods", "", "DELETE", "namespace"),
        (b"GET", "/api/v1/namespaces/a/pods/p/log", "", "CONNECT", "resource"),
        (b"GET", "/api/v1/nodes", "", "LIST", "cluster"),
        (b"OPTIONS", "/api/v1/nodes", "", "other", "cluster"),
    ],
)
def test_verb_and_scope_as_kube_reports_them(
    method: bytes, uri: str, content_type: str, verb: str, scope: str
) -> None:
    info = _info(method, uri)
    assert requestmetrics.clean_scope(info) == scope
    assert requestmetrics.clean_verb(_request(method, uri, content_type), info, scope) == verb


@pytest.mark.parametrize(
    ("uri", "value"),
    [
        (b"/api/v1/pods", ""),
        (b"/x?dryRun=All", "All"),
        (b"/x?dryRun=All&dryRun=All", "All"),
        (b"/x?dryRun=Some", "invalid"),
        (b"/x?dryRun", "invalid"),  # a value "", which kube's ValidateDryRun refuses
        (b"/x?dryRun=All&dryRun=", "invalid"),
    ],
)
def test_dry_run_label(uri: bytes, value: str) -> None:
    assert requestmetrics.clean_dry_run(uri) == value


def test_request_is_recorded_when_finished() -> None:
    uri = "/api/v1/namespaces/metrics-unit/secrets"
    request, info = _request(b"GET", uri), _info(b"GET", uri)
    labels = {
        "component": "apiserver",
        "group": "",
        "resource": "secrets",
        "scope": "namespace",
        "subresource": "",
        "verb": "LIST",
        "version": "v1",
    }
    total = {**labels, "code": "200", "dry_run": "", "system_client": ""}
    before = _sample("apiserver_request_total", total)
    requestmetrics.track(request, info)
    assert _sample("apiserver_request_total", total) == before  # not before it is done
    request.write(b"x" * 1500)
    request.finish()
    assert _sample("apiserver_request_total", total) == before + 1
    assert _sample("apiserver_response_sizes_sum", labels) >= 1500


def test_the_sli_latency_leaves_webhook_time_out() -> None:
    """kube's apiserver_request_sli_duration_seconds: the request's time less what its
    admission webhooks took; dry runs are not in it."""
    uri = "/api/v1/namespaces/metrics-sli/configmaps"
    labels = {
        "component": "apiserver",
        "group": "",
        "resource": "configmaps",
        "scope": "resource",
        "subresource": "",
        "verb": "POST",
        "version": "v1",
    }

    def served(dry_run: bool) -> None:
        full = uri + ("?dryRun=All" if dry_run else "")
        request, info = _request(b"POST", full), _info(b"POST", full)
        requestmetrics.track(request, info)
        add_webhook_wait(120.0)  # as a slow webhook of this request would
        request.finish()

    count = "apiserver_request_sli_duration_seconds_count"
    before = _sample(count, labels)
    contextvars.copy_context().run(served, False)  # a request has a context of its own
    assert _sample(count, labels) == before + 1
    # 120 s of webhooks taken out of a request that took far less: below every bucket
    assert _sample("apiserver_request_sli_duration_seconds_bucket", {**labels, "le": "0.05"}) >= 1
    contextvars.copy_context().run(served, True)
    assert _sample(count, labels) == before + 1


def test_watch_is_longrunning_while_open() -> None:
    uri = "/api/v1/namespaces/metrics-unit/secrets?watch=1"
    request, info = _request(b"GET", uri), _info(b"GET", uri)
    gauge = requestmetrics.LONGRUNNING.labels(
        component="apiserver",
        group="",
        resource="secrets",
        scope="namespace",
        subresource="",
        verb="WATCH",
        version="v1",
    )
    requestmetrics.track(request, info)
    assert gauge._value.get() == 1
    request.connectionLost(Exception("client went away"))
    assert gauge._value.get() == 0


def test_usernames_are_bucketed_as_kube_does() -> None:
    assert compress_username("admin") == "admin"
    assert compress_username("system:serviceaccount:platform-system:default") == (
        "system:serviceaccount:platform-system:default"
    )
    assert compress_username("jane@example.com") == "email_id"
    assert compress_username("jane") == "other"


def _sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _value(family: Any, **labels: str) -> float:
    """A counter family's sample (its name, with _total unless kube's has none)."""
    name = family.name if family.raw or family.name.endswith("_total") else family.name + "_total"
    return _sample(name, labels)


def test_authorizer_counts_decisions() -> None:
    info = _info(b"GET", "/api/v1/namespaces/a/pods")
    attrs = Attributes.from_request(UserInfo(name="jane"), info)
    allowed, no_opinion = (_value(AUTHZ_ATTEMPTS, result=r) for r in ("allowed", "no-opinion"))
    assert ensureDeferred(InstrumentedAuthorizer(AlwaysAllow()).authorize(attrs)).result[0] is (
        Decision.ALLOW
    )
    ensureDeferred(InstrumentedAuthorizer(AlwaysDeny()).authorize(attrs))
    assert _value(AUTHZ_ATTEMPTS, result="allowed") == allowed + 1
    assert _value(AUTHZ_ATTEMPTS, result="no-opinion") == no_opinion + 1


def test_authenticator_counts_success_and_failure() -> None:
    request = _request(b"GET", "/api/v1/pods")
    success, failure = (_value(AUTHN_ATTEMPTS, result=r) for r in ("success", "failure"))
    others = _value(AUTHENTICATED_USERS, username="other")
    anonymous = InstrumentedAuthenticator(RequestAuthenticator([], [], Anonymous()))
    user = ensureDeferred(anonymous.authenticate(request, "/api/v1/pods")).result
    assert user.name == "system:anonymous"
    closed = InstrumentedAuthenticator(RequestAuthenticator([], [], None))
    failed = ensureDeferred(closed.authenticate(request, "/api/v1/pods"))
    assert isinstance(failed.result.value, StatusError)
    failed.addErrback(lambda _: None)
    assert _value(AUTHN_ATTEMPTS, result="success") == success + 1
    assert _value(AUTHN_ATTEMPTS, result="failure") == failure + 1
    assert _value(AUTHENTICATED_USERS, username="other") == others + 1
    assert closed.api_audiences == ()  # everything else is the wrapped authenticator's


def test_requests_over_the_inflight_limit_are_counted_as_kube_does() -> None:
    limiter = InflightLimiter(readonly=1, mutating=1)
    requestmetrics.count_dropped(limiter)
    info = _info(b"GET", "/api/v1/namespaces/metrics-unit/events")
    names = sorted(["component", "dry_run", "group", "resource", "scope", "subresource"])
    names += ["system_client", "verb", "version"]
    values = ("apiserver", "", "", "events", "namespace", "", "", "LIST", "v1")
    labels = {"code": "429", **dict(zip(names, values, strict=True))}
    terminations = requestmetrics.TERMINATIONS.labels(
        "429", "apiserver", "", "events", "namespace", "", "LIST", "v1"
    )

    def total() -> float:
        return _sample("apiserver_request_total", labels)

    before = (total(), terminations._value.get())
    user = UserInfo(name="jane")
    with limiter.slot(info, user), pytest.raises(StatusError) as refused, limiter.slot(info, user):
        pass
    assert refused.value.code == 429
    assert (total(), terminations._value.get()) == (before[0] + 1, before[1] + 1)
    assert limiter.current == {False: 0, True: 0}
