"""Service-account JWTs: keys, signatures, expiry, audiences, lookups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jwt
import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from twisted.internet.defer import succeed

from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.serviceaccount import (
    EXTENDED_FROM,
    EXTENDED_TO,
    STALE,
    LocalSigner,
    ServiceAccountTokens,
    StaticKeys,
    TokenIssuer,
    jwk,
    key_id,
    load_public_keys,
)

ISSUER = "https://issuer"
ACCOUNT = {"metadata": {"name": "robot", "namespace": "ns", "uid": "u-1"}}


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def make(lookup: Any = None) -> tuple[TokenIssuer, ServiceAccountTokens, Clock]:
    key = ec.generate_private_key(ec.SECP256R1())
    clock = Clock()
    issuer = TokenIssuer(LocalSigner(key), ISSUER, clock)
    verifier = ServiceAccountTokens(
        StaticKeys([key.public_key()]), [ISSUER], [ISSUER], lookup, clock
    )
    return issuer, verifier, clock


@pytest_twisted.ensureDeferred
async def test_round_trip_with_ecdsa() -> None:
    issuer, verifier, _ = make()
    token, _ = await issuer.issue(ACCOUNT, [ISSUER, "other"], 600)
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    found = await verifier.authenticate_token(token)
    assert found is not None
    assert (found.user.name, found.user.uid, found.audiences) == (
        "system:serviceaccount:ns:robot",
        "u-1",
        (ISSUER,),
    )


@pytest_twisted.ensureDeferred
async def test_an_extended_token_past_warnafter_is_stale_but_works() -> None:
    """kube's safe transition: used after ``warnafter`` the token still authenticates,
    audited as stale and counted (serviceaccount_stale_tokens_total)."""
    issuer, verifier, clock = make()
    counted: list[int] = []
    verifier.stale = lambda: counted.append(1)
    token, issued = await issuer.issue(ACCOUNT, [ISSUER], EXTENDED_TO, warn_after=EXTENDED_FROM)
    assert issued == int(clock.now)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["platform.io"]["warnafter"] == issued + EXTENDED_FROM
    found = await verifier.authenticate_token(token)
    assert found is not None and found.annotations == () and counted == []
    clock.now += EXTENDED_FROM + 5
    found = await verifier.authenticate_token(token)
    assert found is not None and found.user.name == "system:serviceaccount:ns:robot"
    assert found.annotations == (
        (STALE, "subject: system:serviceaccount:ns:robot, seconds after warning threshold: 5"),
    )
    assert counted == [1]


@pytest_twisted.ensureDeferred
async def test_foreign_tokens_are_not_ours() -> None:
    _, verifier, _ = make()
    assert await verifier.authenticate_token("not-a-jwt") is None
    foreign = jwt.encode({"iss": "elsewhere", "sub": "x"}, "s" * 32, "HS256")
    assert await verifier.authenticate_token(foreign) is None


@pytest_twisted.ensureDeferred
async def test_bad_tokens_are_errors() -> None:
    issuer, verifier, clock = make()
    other_issuer, _, _ = make()
    forged, _ = await other_issuer.issue(ACCOUNT, [ISSUER], 600)
    with pytest.raises(AuthenticationError):
        await verifier.authenticate_token(forged)
    token, _ = await issuer.issue(ACCOUNT, [ISSUER], 600)
    clock.now += 600 + 61  # past the expiry and the leeway
    with pytest.raises(AuthenticationError, match="expired"):
        await verifier.authenticate_token(token)
    clock.now -= 661
    wrong_audience, _ = await issuer.issue(ACCOUNT, ["vault"], 600)
    with pytest.raises(AuthenticationError, match="invalid for the target audiences"):
        await verifier.authenticate_token(wrong_audience)


@pytest_twisted.ensureDeferred
async def test_lookup_rejects_deleted_or_recreated_accounts() -> None:
    current: dict[str, Any] = {"metadata": {"uid": "u-2"}}
    issuer, verifier, _ = make(lambda ns, kind, name: succeed(current))
    token, _ = await issuer.issue(ACCOUNT, [ISSUER], 600)
    with pytest.raises(AuthenticationError, match="does not match claim"):
        await verifier.authenticate_token(token)
    _, gone, _ = make(lambda ns, kind, name: succeed(None))
    gone.keys = verifier.keys
    with pytest.raises(AuthenticationError, match="has been deleted"):
        await gone.authenticate_token(token)


def test_key_files_hold_public_private_or_certificates(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP384R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "keys.pem"
    path.write_bytes(public + private)
    keys = load_public_keys(str(path))
    assert [key_id(k) for k in keys] == [key_id(key.public_key())] * 2
    assert jwk(keys[0])["crv"] == "P-384" and jwk(keys[0])["alg"] == "ES384"
    (tmp_path / "empty.pem").write_text("nothing")
    with pytest.raises(ValueError, match="no keys"):
        load_public_keys(str(tmp_path / "empty.pem"))


@pytest_twisted.ensureDeferred
async def test_a_key_id_no_key_has_is_refused_even_when_a_key_would_verify() -> None:
    """kube's static key getter: a token's ``kid`` picks its keys; none for an unknown one."""
    issuer, verifier, _ = make()
    token, _ = await issuer.issue(ACCOUNT, [ISSUER], 600)
    header = jwt.get_unverified_header(token)
    key = issuer.signer.key  # type: ignore[attr-defined]
    claims = jwt.decode(token, options={"verify_signature": False})
    renamed = jwt.encode(claims, key, header["alg"], headers={"kid": "someone-else"})
    with pytest.raises(AuthenticationError, match=r"^invalid signature, no keys found$"):
        await verifier.authenticate_token(renamed)
    unnamed = jwt.encode(claims, key, header["alg"])  # no kid: every key is tried
    assert await verifier.authenticate_token(unnamed) is not None
