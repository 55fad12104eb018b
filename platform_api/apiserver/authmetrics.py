"""kube's authentication and authorization filter metrics (endpoints/filters/metrics.go).

The filter chain's authenticator and authorizer are wrapped (``instrument``), so only the
checks the chain makes are counted, not SubjectAccessReviews or escalation checks.
"""

from __future__ import annotations

import time
from typing import Any

from twisted.web.server import Request

from platform_api import errors
from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram
from platform_api.authentication.union import RequestAuthenticator
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, Decision

_BUCKETS = tuple(0.001 * 2**i for i in range(15))
AUTHENTICATED_USERS = ReactorCounter(
    "authenticated_user_requests",
    "[ALPHA] Counter of authenticated requests broken out by username.",
    ["username"],
    REGISTRY,
    raw=True,
)
AUTHN_ATTEMPTS = ReactorCounter(
    "authentication_attempts",
    "[ALPHA] Counter of authenticated attempts.",
    ["result"],
    REGISTRY,
    raw=True,
)
AUTHN_DURATION = ReactorHistogram(
    "authentication_duration_seconds",
    "[ALPHA] Authentication duration in seconds broken out by result.",
    ["result"],
    _BUCKETS,
    REGISTRY,
)
AUTHZ_ATTEMPTS = ReactorCounter(
    "authorization_attempts_total",
    "[ALPHA] Counter of authorization attempts broken down by result. It can be either "
    "'allowed', 'denied', 'no-opinion' or 'error'.",
    ["result"],
    REGISTRY,
)
AUTHZ_DURATION = ReactorHistogram(
    "authorization_duration_seconds",
    "[ALPHA] Authorization duration in seconds broken out by result.",
    ["result"],
    _BUCKETS,
    REGISTRY,
)
_KNOWN_USERS: tuple[str, ...] = ("admin", "client", "kube_proxy", "kubelet")
_KNOWN_USERS += ("system:serviceaccount:platform-system:default",)
_AUTHZ_RESULT = {Decision.ALLOW: "allowed", Decision.DENY: "denied"}


def compress_username(name: str) -> str:
    """kube's few username buckets, so the metric never carries real user names."""
    if name in _KNOWN_USERS:
        return name
    return "email_id" if "@" in name else "other"


def _record_authn(result: str, started: float) -> None:
    AUTHN_ATTEMPTS.inc(result)
    AUTHN_DURATION.observe(time.perf_counter() - started, result)


class InstrumentedAuthenticator(RequestAuthenticator):
    """The chain's authenticator, timed; everything else is the wrapped one's."""

    def __init__(self, inner: RequestAuthenticator) -> None:  # no super(): a view on inner
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def authenticate(self, request: Request, path: str) -> UserInfo:
        started = time.perf_counter()
        try:
            user = await self._inner.authenticate(request, path)
        except errors.StatusError:
            _record_authn("failure", started)
            raise
        except Exception:
            _record_authn("error", started)
            raise
        _record_authn("success", started)
        AUTHENTICATED_USERS.inc(compress_username(user.name))
        return user


class InstrumentedAuthorizer:
    """The chain's authorizer, counted and timed by decision."""

    def __init__(self, inner: Authorizer) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        started = time.perf_counter()
        result = "error"
        try:
            decision, reason = await self._inner.authorize(attrs)
            result = _AUTHZ_RESULT.get(decision, "no-opinion")
            return decision, reason
        finally:
            AUTHZ_ATTEMPTS.inc(result)
            AUTHZ_DURATION.observe(time.perf_counter() - started, result)
