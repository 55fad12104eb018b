"""Token webhook: a remote service reviews bearer tokens (``TokenReview``).

The server posts ``{"spec": {"token": ...}}`` to the service named by a
kubeconfig-format file and reads ``status``.  Answers, positive or negative, are
cached for ``--authentication-token-webhook-cache-ttl``; a service that is down,
slow or wrong is an error for its tokens only (401), never cached, and never holds
up other requests: calls are asynchronous, with a timeout.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.interfaces import IReactorTime

from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.user import UserInfo
from platform_api.client.kubeconfig import Connection, ReviewError, post_review

GROUP = "authentication.platform.io"
VERSIONS = ("v1beta1", "v1")
TIMEOUT = 10.0


class TokenWebhook:
    def __init__(
        self,
        connection: Connection,
        reactor: IReactorTime,
        version: str = "v1beta1",
        cache_ttl: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        client: Any = None,
        audiences: tuple[str, ...] = (),
        review_group: str = GROUP,
    ) -> None:
        self.connection = connection
        self.review_group = review_group  # authentication.k8s.io under upstream names
        self.audiences = audiences  # the API's; sent with every review
        self.client = client or connection.client(reactor)
        self.version = version
        self.cache_ttl = cache_ttl
        self.clock = clock
        self._cache: dict[bytes, tuple[float, AuthResponse | None, str]] = {}

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        targets = audiences or self.audiences
        # Keyed by a digest of token and audiences: no tokens kept in memory.
        key = hashlib.sha256("\0".join((token, *targets)).encode()).digest()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > self.clock():
            return _result(cached[1], cached[2])
        response, error = await self._review(token, targets)
        if len(self._cache) > 10000:
            self._cache.clear()
        self._cache[key] = (self.clock() + self.cache_ttl, response, error)
        return _result(response, error)

    async def _review(
        self, token: str, targets: tuple[str, ...]
    ) -> tuple[AuthResponse | None, str]:
        spec: dict[str, Any] = {"token": token}
        if targets:
            spec["audiences"] = list(targets)
        api_version = f"{self.review_group}/{self.version}"
        review = {"apiVersion": api_version, "kind": "TokenReview", "spec": spec}
        try:
            status = await post_review(self.client, self.connection, review, TIMEOUT)
        except ReviewError as e:
            raise AuthenticationError(f"webhook call failed: {e}") from None
        if not status.get("authenticated"):
            return None, str(status.get("error") or "")
        response = _response(status)
        if targets:
            # Audiences the answer names must include one asked for; none means all of them.
            granted = response.audiences or targets
            accepted = tuple(a for a in granted if a in targets)
            if not accepted:
                return None, "token audiences is invalid for the target audiences"
            response = AuthResponse(response.user, accepted)
        return response, ""


def _response(status: dict[str, Any]) -> AuthResponse:
    user = status.get("user") or {}
    extra = {str(k): tuple(str(x) for x in v) for k, v in (user.get("extra") or {}).items()}
    info = UserInfo(
        str(user.get("username") or ""),
        str(user.get("uid") or ""),
        tuple(str(g) for g in user.get("groups") or ()),
        extra,
    )
    return AuthResponse(info, tuple(status.get("audiences") or ()))


def _result(response: AuthResponse | None, error: str) -> AuthResponse | None:
    if error:
        raise AuthenticationError(error)
    return response
