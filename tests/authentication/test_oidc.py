"""OIDC ID token rules: key refresh, prefixes, email verification, groups."""

from __future__ import annotations

import time
from typing import Any

import jwt
import orjson
import pytest
import pytest_twisted
from cryptography.hazmat.primitives.asymmetric import rsa

from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.oidc import OIDCAuthenticator, OIDCOptions
from platform_api.authentication.serviceaccount import jwk

ISSUER = "https://idp"


class Reply:
    def __init__(self, body: Any) -> None:
        self.code, self.body = 200, orjson.dumps(body)

    async def content(self) -> bytes:
        return self.body


class Provider:
    def __init__(self) -> None:
        self.keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048)]
        self.fetches = 0

    async def get(self, url: str, timeout: float) -> Reply:
        if url.endswith("openid-configuration"):
            return Reply({"issuer": ISSUER, "jwks_uri": ISSUER + "/keys"})
        self.fetches += 1
        return Reply({"keys": [jwk(k.public_key()) for k in self.keys]})

    def token(self, **claims: Any) -> str:
        key = self.keys[-1]
        body = {"iss": ISSUER, "aud": "c", "sub": "u", "exp": int(time.time()) + 60, **claims}
        return jwt.encode(body, key, "RS256", headers={"kid": jwk(key.public_key())["kid"]})


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def make(**options: Any) -> tuple[OIDCAuthenticator, Provider, Clock]:
    provider, clock = Provider(), Clock()
    opts = OIDCOptions(issuer_url=ISSUER, client_id="c", **options)
    return OIDCAuthenticator(opts, provider, clock), provider, clock


@pytest_twisted.ensureDeferred
async def test_unknown_keys_refresh_at_most_every_ten_seconds() -> None:
    auth, provider, clock = make()
    assert (await auth.authenticate_token(provider.token())).user.name == f"{ISSUER}#u"
    provider.keys.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    clock.now = 5
    with pytest.raises(AuthenticationError, match="no key"):
        await auth.authenticate_token(provider.token())
    clock.now = 10
    assert await auth.authenticate_token(provider.token()) is not None
    assert provider.fetches == 2


@pytest_twisted.ensureDeferred
async def test_prefix_rules_and_email() -> None:
    auth, provider, _ = make(username_claim="email")
    found = await auth.authenticate_token(provider.token(email="a@b", email_verified=True))
    assert found is not None and found.user.name == "a@b"
    with pytest.raises(AuthenticationError, match="email not verified"):
        await auth.authenticate_token(provider.token(email="a@b", email_verified=False))
    plain, provider, _ = make(username_prefix="-", groups_claim="g", groups_prefix="p:")
    found = await plain.authenticate_token(provider.token(g="one"))
    assert found is not None and (found.user.name, found.user.groups) == ("u", ("p:one",))
    with pytest.raises(AuthenticationError, match="parse groups claim"):
        await plain.authenticate_token(provider.token(g=[1]))


@pytest_twisted.ensureDeferred
async def test_other_issuers_are_not_ours() -> None:
    auth, provider, _ = make()
    assert await auth.authenticate_token(provider.token(iss="https://other")) is None
    assert await auth.authenticate_token("opaque") is None
    assert provider.fetches == 0
