"""OpenID Connect ID tokens, configured by the ``--oidc-*`` flags.

A JWT whose ``iss`` is ``--oidc-issuer-url`` is verified with the provider's keys
(fetched with treq from its discovery document, and fetched again when a token names
an unknown key), must list ``--oidc-client-id`` among its audiences, be current, and
carry every ``--oidc-required-claim``.  The user name comes from
``--oidc-username-claim`` with kube's prefix rules; groups from
``--oidc-groups-claim``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jwt
import orjson

from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.jwts import issuer_of
from platform_api.authentication.user import UserInfo

REFRESH_INTERVAL = 10.0  # at most one key refresh per this many seconds


@dataclass
class OIDCOptions:
    issuer_url: str
    client_id: str
    username_claim: str = "sub"
    username_prefix: str | None = None  # None: kube's default for the claim
    groups_claim: str = ""
    groups_prefix: str = ""
    required_claims: dict[str, str] = field(default_factory=dict)
    signing_algs: tuple[str, ...] = ("RS256",)
    audiences: tuple[str, ...] = ()  # more accepted audiences (AuthenticationConfiguration)
    discovery_url: str = ""  # where discovery is fetched, when not under the issuer

    def prefix(self) -> str:
        """kube: "-" means none; by default non-email claims get ``<issuer>#``."""
        if self.username_prefix == "-":
            return ""
        if self.username_prefix is not None:
            return self.username_prefix
        return "" if self.username_claim == "email" else f"{self.issuer_url}#"


class OIDCAuthenticator:
    def __init__(
        self,
        options: OIDCOptions,
        client: Any,
        clock: Callable[[], float] = time.time,
        mapper: Callable[[dict[str, Any]], UserInfo] | None = None,
    ) -> None:
        self.options = options
        self.client = client
        self.clock = clock
        self.mapper = mapper or self._user
        self._keys: dict[str, Any] = {}
        self._fetched_at = float("-inf")

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        peeked = issuer_of(token)
        if peeked is None or peeked[0] != self.options.issuer_url:
            return None
        header = peeked[1]
        key = await self._key(header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(self.options.signing_algs),
                audience=[self.options.client_id, *self.options.audiences],
                issuer=self.options.issuer_url,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as e:
            raise AuthenticationError(f"oidc: verify token: {e}") from None
        return AuthResponse(self.mapper(claims))

    async def _key(self, kid: str | None) -> Any:
        if not self._has(kid) and self.clock() - self._fetched_at >= REFRESH_INTERVAL:
            self._fetched_at = self.clock()
            self._keys = await self._fetch_keys()
        if kid in self._keys:
            return self._keys[kid]
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        raise AuthenticationError("oidc: no key of the provider matches the token")

    def _has(self, kid: str | None) -> bool:
        return kid in self._keys if kid is not None else len(self._keys) == 1

    async def _fetch_keys(self) -> dict[str, Any]:
        base = self.options.issuer_url.rstrip("/")
        url = self.options.discovery_url or base + "/.well-known/openid-configuration"
        try:
            discovery = await self._get_json(url)
            if discovery.get("issuer") != self.options.issuer_url:
                raise AuthenticationError(
                    f"oidc: issuer did not match the issuer returned by provider, expected "
                    f"{self.options.issuer_url!r} got {discovery.get('issuer')!r}"
                )
            jwks = jwt.PyJWKSet.from_dict(await self._get_json(discovery["jwks_uri"]))
        except AuthenticationError:
            raise
        except Exception as e:
            raise AuthenticationError(f"oidc: fetching the provider's keys failed: {e}") from None
        return {k.key_id or "": k.key for k in jwks.keys}

    async def _get_json(self, url: str) -> dict[str, Any]:
        reply = await self.client.get(url, timeout=10)
        body = await reply.content()
        if reply.code != 200:
            raise AuthenticationError(f"oidc: {url}: status {reply.code}")
        result: dict[str, Any] = orjson.loads(body)
        return result

    def _user(self, claims: dict[str, Any]) -> UserInfo:
        opts = self.options
        for claim, wanted in opts.required_claims.items():
            if claims.get(claim) != wanted:
                raise AuthenticationError(
                    f"oidc: required claim {claim} value does not match. Got = "
                    f"{claims.get(claim)}, want = {wanted}"
                )
        name = claims.get(opts.username_claim)
        if not isinstance(name, str) or not name:
            raise AuthenticationError(f"oidc: parse username claims {opts.username_claim!r}")
        if opts.username_claim == "email" and claims.get("email_verified", True) is not True:
            raise AuthenticationError("oidc: email not verified")
        groups: Sequence[Any] = ()
        if opts.groups_claim and opts.groups_claim in claims:
            value = claims[opts.groups_claim]
            groups = [value] if isinstance(value, str) else list(value or ())
            if not all(isinstance(g, str) for g in groups):
                raise AuthenticationError(f"oidc: parse groups claim {opts.groups_claim!r}")
        return UserInfo(opts.prefix() + name, groups=tuple(opts.groups_prefix + g for g in groups))
