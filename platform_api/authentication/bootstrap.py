"""Bootstrap tokens: ``<id>.<secret>`` backed by a Secret in ``platform-system``.

The Secret ``bootstrap-token-<id>`` of type ``bootstrap.platform.io/token`` holds
``token-id``, ``token-secret``, and optionally ``expiration`` (RFC 3339),
``usage-bootstrap-authentication`` ("true" to allow authentication) and
``auth-extra-groups`` (comma list, each ``system:bootstrappers:...``).  A token that
does not match one is simply not authenticated (kube logs why and answers "no").
Under ``--serve-upstream-groups`` a token may also be kube's: in ``kube-system`` with type
``bootstrap.kubernetes.io/token``, where ``kubeadm token create`` writes it.
"""

from __future__ import annotations

import base64
import hmac
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from platform_api.authentication.interface import AuthResponse
from platform_api.authentication.user import UserInfo
from platform_api.scheme import namespaces
from platform_api.timestamps import parse_timestamp

SECRET_TYPE = "bootstrap.platform.io/token"
UPSTREAM_SECRET_TYPE = "bootstrap.kubernetes.io/token"
GROUP = "system:bootstrappers"
TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})\Z")
EXTRA_GROUP = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\Z")
# (namespace, name) -> the Secret, or None.
SecretLookup = Callable[[str, str], dict[str, Any] | None]


def _data(secret: dict[str, Any], key: str) -> str:
    value = (secret.get("data") or {}).get(key)
    if value is None:
        return str((secret.get("stringData") or {}).get(key, ""))
    try:
        return base64.b64decode(value).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


def _expired(text: str, now: float) -> bool:
    if not text:
        return False
    when = parse_timestamp(text)
    return when is None or when < now  # an unreadable expiry counts as expired, as kube's


@dataclass(frozen=True)
class TokenPlaces:
    """Where token Secrets live: their namespaces (searched in order) and types."""

    namespaces: tuple[str, ...] = (namespaces.SYSTEM,)
    types: frozenset[str] = frozenset({SECRET_TYPE})

    @classmethod
    def of(cls, upstream: bool) -> TokenPlaces:
        if not upstream:
            return cls()
        system = namespaces.names(namespaces.SYSTEM, upstream)
        return cls(system, frozenset({SECRET_TYPE, UPSTREAM_SECRET_TYPE}))

    def holds(self, secret: dict[str, Any]) -> bool:
        return secret.get("type") in self.types


class BootstrapTokens:
    def __init__(
        self,
        lookup: SecretLookup,
        clock: Callable[[], float] = time.time,
        places: TokenPlaces = TokenPlaces(),
    ) -> None:
        self.lookup = lookup
        self.clock = clock
        self.places = places

    def _secret(self, token_id: str) -> dict[str, Any] | None:
        for namespace in self.places.namespaces:
            secret = self.lookup(namespace, f"bootstrap-token-{token_id}")
            if secret is not None:
                return secret if self.places.holds(secret) else None
        return None

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        match = TOKEN.match(token)
        if match is None:
            return None
        token_id, token_secret = match.groups()
        secret = self._secret(token_id)
        if secret is None:
            return None
        if secret.get("metadata", {}).get("deletionTimestamp"):
            return None
        if _data(secret, "token-id") != token_id:
            return None
        if not hmac.compare_digest(_data(secret, "token-secret"), token_secret):
            return None
        if _expired(_data(secret, "expiration"), self.clock()):
            return None
        if _data(secret, "usage-bootstrap-authentication") != "true":
            return None
        extra = [g.strip() for g in _data(secret, "auth-extra-groups").split(",") if g.strip()]
        if any(not EXTRA_GROUP.match(g) for g in extra):
            return None
        groups = (GROUP, *[g for g in extra if g != GROUP])
        return AuthResponse(UserInfo(f"system:bootstrap:{token_id}", groups=groups))
