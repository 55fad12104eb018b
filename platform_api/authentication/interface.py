"""The authenticator interface and the union kube builds from its authenticators."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from twisted.web.server import Request

from platform_api.authentication.user import UserInfo


@dataclass(frozen=True)
class AuthResponse:
    user: UserInfo
    audiences: tuple[str, ...] = ()


class AuthenticationError(Exception):
    """Credentials were presented and are bad: the request is 401, never anonymous."""


class Authenticator(Protocol):
    """``authenticate`` answers None for "not mine"; raises AuthenticationError for bad ones."""

    def authenticate(self, request: Request) -> Awaitable[AuthResponse | None]: ...


class TokenAuthenticator(Protocol):
    """A bearer-token method: None when the token is not one it knows."""

    def authenticate_token(self, token: str) -> Awaitable[AuthResponse | None]: ...
