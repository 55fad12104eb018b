"""The authenticator interface and the union kube builds from its authenticators."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from platform_api.authentication.user import UserInfo

if TYPE_CHECKING:
    from twisted.web.server import Request


@dataclass(frozen=True)
class AuthResponse:
    user: UserInfo
    audiences: tuple[str, ...] = ()
    # What the request's answer and audit event carry about how it authenticated (kube's
    # warning.AddWarning and audit.AddAuditAnnotation from inside an authenticator).
    warnings: tuple[str, ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()


class AuthenticationError(Exception):
    """Credentials were presented and are bad: the request is 401, never anonymous."""


class Authenticator(Protocol):
    """``authenticate`` answers None for "not mine"; raises AuthenticationError for bad ones."""

    def authenticate(self, request: Request) -> Awaitable[AuthResponse | None]: ...


class TokenAuthenticator(Protocol):
    """A bearer-token method: None when the token is not one it knows.

    ``audiences`` are the ones a TokenReview asks for (empty: the API's own).  A method
    that knows about audiences answers with the accepted ones; one that does not
    answers without, and the chain decides.
    """

    def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> Awaitable[AuthResponse | None]: ...
