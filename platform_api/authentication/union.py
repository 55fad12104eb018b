"""kube's authenticator chain: request methods, bearer tokens, then anonymous.

Bad credentials of any kind fail the request (401) even when anonymous access is on;
only a request with no credentials at all is anonymous.  Every authenticated user is
also in ``system:authenticated``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from twisted.web.server import Request

from platform_api import errors
from platform_api.authentication.interface import (
    AuthenticationError,
    Authenticator,
    AuthResponse,
    TokenAuthenticator,
)
from platform_api.authentication.tokencache import SUCCESS_TTL, TokenCache
from platform_api.authentication.user import (
    ANONYMOUS,
    ANONYMOUS_USER,
    AUTHENTICATED,
    UNAUTHENTICATED,
    UserInfo,
)

NOTES_ATTRIBUTE = "_platform_authentication_notes"
Notes = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


def notes_of(request: Request) -> Notes:
    """The warnings and audit annotations the token's authenticator had for the request."""
    notes: Notes = getattr(request, NOTES_ATTRIBUTE, ((), ()))
    return notes


def bearer_token(request: Request) -> str | None:
    header = request.getHeader(b"authorization")
    if header is None:
        return None
    parts = header.decode("latin-1").strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def with_authenticated_group(user: UserInfo) -> UserInfo:
    if user.name == ANONYMOUS or AUTHENTICATED in user.groups or UNAUTHENTICATED in user.groups:
        return user
    return user.with_group(AUTHENTICATED)


class Anonymous:
    """Anonymous access, optionally only for some paths (AuthenticationConfiguration)."""

    def __init__(self, paths: Sequence[str] | None = None) -> None:
        self.paths = tuple(paths) if paths is not None else None

    def allows(self, path: str) -> bool:
        if self.paths is None:
            return True
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in self.paths)


class RequestAuthenticator:
    def __init__(
        self,
        request_methods: Sequence[Authenticator],
        token_methods: Sequence[TokenAuthenticator],
        anonymous: Anonymous | None,
        api_audiences: tuple[str, ...] = (),
        clock: Callable[[], float] | None = None,
        cache_ttl: float = SUCCESS_TTL,
    ) -> None:
        self.request_methods = list(request_methods)
        self.token_methods = list(token_methods)
        self.anonymous = anonymous
        self.api_audiences = api_audiences
        # kube's 10 s cache of successful token authentications (given a clock)
        self.cache = (
            TokenCache(self._authenticate_token, clock, cache_ttl)
            if clock is not None and cache_ttl > 0
            else None
        )

    async def authenticate(self, request: Request, path: str) -> UserInfo:
        failed = False
        for method in self.request_methods:
            try:
                response = await method.authenticate(request)
            except AuthenticationError:
                failed = True
                continue
            if response is not None:
                return with_authenticated_group(response.user)
        token = bearer_token(request)
        if token is not None:
            try:
                found = await self.authenticate_token(token)
            except AuthenticationError:
                found = None
            if found is not None:
                request.requestHeaders.removeHeader(b"authorization")
                if found.warnings or found.annotations:
                    setattr(request, NOTES_ATTRIBUTE, (found.warnings, found.annotations))
                return with_authenticated_group(found.user)
            failed = True  # "invalid bearer token"
        if failed or self.anonymous is None or not self.anonymous.allows(path):
            raise errors.unauthorized()
        return ANONYMOUS_USER

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        """The bearer-token methods in order (also what TokenReview runs), through the
        cache; raises AuthenticationError when a method rejected the token and none
        accepted it."""
        if self.cache is not None:
            return await self.cache.authenticate_token(token, audiences)
        return await self._authenticate_token(token, audiences)

    async def _authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        """The methods themselves.

        A method that ignores audiences authenticates for the API's only: asked for
        others, its answer holds just for those of them that are the API's (kube's
        audience-agnostic wrapper)."""
        error: AuthenticationError | None = None
        for method in self.token_methods:
            try:
                found = await method.authenticate_token(token, audiences)
            except AuthenticationError as e:
                error = e
                continue
            if found is not None and not found.audiences and self.api_audiences:
                accepted = tuple(
                    a for a in audiences or self.api_audiences if a in self.api_audiences
                )
                if not accepted:
                    continue
                found = dataclasses.replace(found, audiences=accepted)
            if found is not None:
                return found
        if error is not None:
            raise error
        return None
