"""Service-account tokens: JWTs the server signs (TokenRequest) and verifies.

A token names its issuer (``--service-account-issuer``), audiences, expiry, the
service account and, when bound, the Pod or Secret it lives with.  It is signed by
this process's key or by an external signer (``--service-account-signing-endpoint``,
externalsigner.py), and authenticates as ``system:serviceaccount:<ns>:<name>`` while
the signature verifies with a key of its ``kid`` (the ``--service-account-key-file``
keys, or the signer's), an audience is one the server accepts
(``--api-audiences``), and (``--service-account-lookup``) the account and the bound
object still exist with the same uids.  The issuer's discovery document and JWKS
let other parties verify the same tokens.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from platform_api import pem
from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.jwts import issuer_of
from platform_api.authentication.user import UserInfo
from platform_api.uid import new_uid

Obj = dict[str, Any]
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
# (namespace, kind, name) -> the object, or None when absent.
Lookup = Callable[[str, str, str], Awaitable[Obj | None]]

CLAIM = "platform.io"  # kube's private "kubernetes.io" claim, in the brand
EXTRA = "authentication.platform.io/"
PREFIX = "system:serviceaccount:"
LEEWAY = 60
WARN_AFTER = "warnafter"  # in CLAIM: when a pod's extended token turns stale
# kube's safe transition to bound tokens: the lifetime the ServiceAccount admission plugin
# asks for in a pod's projected token (WarnOnlyBoundTokenExpirationSeconds), and what
# such a token is extended to (ExpirationExtensionSeconds, a year).
EXTENDED_FROM = 60 * 60 + 7
EXTENDED_TO = 24 * 365 * 60 * 60
STALE = "authentication.platform.io/stale-token"  # kube's audit annotation
# The signature and required claims by PyJWT; times against our clock, audiences by us.
_SIGNATURE: Any = {
    "verify_exp": False,
    "verify_nbf": False,
    "verify_iat": False,
    "verify_aud": False,
    "require": ["exp", "iss", "sub"],
}
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.S)
_CURVES = {
    "secp256r1": ("ES256", "P-256"),
    "secp384r1": ("ES384", "P-384"),
    "secp521r1": ("ES512", "P-521"),
}


def algorithm(key: PublicKey | PrivateKey) -> str:
    if isinstance(key, rsa.RSAPublicKey | rsa.RSAPrivateKey):
        return "RS256"
    return _CURVES[key.curve.name][0]


def key_id(key: PublicKey) -> str:
    """kube's kid: the unpadded base64url SHA-256 of the DER public key."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def load_private_key(path: str) -> PrivateKey:
    with open(path, "rb") as f:
        key = pem.load_private_key(f.read())
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path}: only RSA and ECDSA keys sign service-account tokens")
    return key


def load_public_keys(path: str) -> list[PublicKey]:
    """Every key in a PEM file: public keys, private keys, or certificates."""
    with open(path, "rb") as f:
        data = f.read()
    keys = [_public(m.group(0), m.group(1)) for m in _PEM_BLOCK.finditer(data)]
    if not keys:
        raise ValueError(f"{path}: no keys found")
    return keys


def _public(block: bytes, label: bytes) -> PublicKey:
    if label == b"CERTIFICATE":
        key: Any = x509.load_pem_x509_certificate(block).public_key()
    elif b"PRIVATE" in label:
        key = pem.load_private_key(block).public_key()
    else:
        key = serialization.load_pem_public_key(block)
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise ValueError("only RSA and ECDSA keys verify service-account tokens")
    return key


def jwk(key: PublicKey, kid: str = "") -> Obj:
    """One JSON Web Key of the JWKS document (``kid``: the key's own, or kube's hash)."""
    out: Obj = {"use": "sig", "kid": kid or key_id(key), "alg": algorithm(key)}
    if isinstance(key, rsa.RSAPublicKey):
        numbers = key.public_numbers()
        out.update(kty="RSA", n=_b64_int(numbers.n), e=_b64_int(numbers.e))
    else:
        point = key.public_numbers()
        size = (key.curve.key_size + 7) // 8
        out.update(
            kty="EC",
            crv=_CURVES[key.curve.name][1],
            x=_b64(point.x.to_bytes(size, "big")),
            y=_b64(point.y.to_bytes(size, "big")),
        )
    return out


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64_int(value: int) -> str:
    return _b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))


@dataclass(frozen=True)
class VerifyingKey:
    """A key that verifies tokens, under the key ID tokens name it by."""

    kid: str
    key: PublicKey
    excluded: bool = False  # from OIDC discovery: an external signer's key for old tokens


class KeySource(Protocol):
    """Where verifying keys come from: files (StaticKeys) or an external signer."""

    async def keys_for(self, kid: str) -> list[VerifyingKey]:
        """The keys of ``kid``; all of them for a token that names none."""
        ...

    def published(self) -> list[VerifyingKey]:
        """The keys the issuer's JWKS document lists."""
        ...

    def max_age(self) -> int:
        """How long, in seconds, the discovery documents may be cached."""
        ...


class StaticKeys:
    """Keys read from files at start-up: their ID is kube's hash of the key."""

    def __init__(self, keys: Sequence[PublicKey]) -> None:
        self.all = [VerifyingKey(key_id(k), k) for k in keys]
        self.by_id: dict[str, list[VerifyingKey]] = {}
        for entry in self.all:
            self.by_id.setdefault(entry.kid, []).append(entry)

    async def keys_for(self, kid: str) -> list[VerifyingKey]:
        return self.all if not kid else self.by_id.get(kid, [])

    def published(self) -> list[VerifyingKey]:
        return self.all

    def max_age(self) -> int:
        return 3600  # kube's, for keys that never change


async def signed_claims(token: str, header: Obj, keys: KeySource, options: Any) -> Obj:
    """The claims of ``token`` once one of its ``kid``'s keys (all keys without one)
    verifies it; a ``kid`` no key has is refused, as kube refuses it."""
    kid = header.get("kid")
    candidates = await keys.keys_for(kid if isinstance(kid, str) else "")
    if not candidates:
        raise AuthenticationError("invalid signature, no keys found")
    errors = []
    for entry in candidates:
        try:
            claims: Obj = jwt.decode(
                token, entry.key, algorithms=[algorithm(entry.key)], options=options
            )
        except jwt.PyJWTError as e:
            errors.append(str(e))
            continue
        return claims
    raise AuthenticationError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")


def accepted_audiences(
    claims: Obj, targets: Sequence[str], implicit: Sequence[str]
) -> tuple[str, ...]:
    """The token's audiences among ``targets`` (what the request asks for); a token that
    names none has ``implicit`` ones (the API's: kube's legacy tokens).  None accepted is
    an error, unless there are no implicit audiences (kube's rule)."""
    named = claims.get("aud") or list(implicit)
    named = [named] if isinstance(named, str) else list(named)
    accepted = tuple(a for a in named if a in targets)
    if not accepted and implicit:
        raise AuthenticationError(
            f"token audiences {named} is invalid for the target audiences {list(targets)}"
        )
    return accepted


def _ref(obj: Obj) -> Obj:
    """A claim naming an object: its name and uid, each left out when empty."""
    meta = obj["metadata"]
    return {k: v for k in ("name", "uid") if (v := meta.get(k))}


class SigningError(Exception):
    """A token could not be signed (an external signer failed or misbehaved)."""


class Signer(Protocol):
    """What turns claims into a signed JWT: a key of this process or an external signer."""

    async def sign(self, claims: Obj) -> str:
        """The compact JWT of ``claims``; raises SigningError."""
        ...


class LocalSigner:
    """Signs with ``--service-account-signing-key-file`` (or the embedded PKI's key)."""

    def __init__(self, key: PrivateKey) -> None:
        self.key = key
        self.kid = key_id(key.public_key())

    async def sign(self, claims: Obj) -> str:
        return jwt.encode(claims, self.key, algorithm(self.key), headers={"kid": self.kid})


class TokenIssuer:
    def __init__(self, signer: Signer, issuer: str, clock: Callable[[], float] = time.time) -> None:
        self.signer = signer
        self.issuer = issuer
        self.clock = clock

    async def issue(
        self,
        account: Obj,
        audiences: Sequence[str],
        seconds: int,
        bound: tuple[str, Obj] | None = None,
        node: Obj | None = None,
        warn_after: int = 0,
    ) -> tuple[str, int]:
        """A signed token for ``account``, bound to an object and naming a node (a
        pod's, or the bound Node), valid ``seconds``; with ``warn_after``, used later
        than that it is reported stale (kube's ``warnafter``).  Returns it and when it
        was issued (Unix seconds)."""
        now = int(self.clock())
        meta = account["metadata"]
        private: Obj = {"namespace": meta["namespace"], "serviceaccount": _ref(account)}
        if bound is not None:
            kind, obj = bound
            private[kind.lower()] = _ref(obj)
        if node is not None:
            private["node"] = _ref(node)
        if warn_after:
            private[WARN_AFTER] = now + warn_after
        private = dict(sorted(private.items()))  # as kube's tokens spell the claim
        claims = {
            "aud": list(audiences),
            "exp": now + seconds,
            "iat": now,
            "iss": self.issuer,
            "jti": new_uid(),
            CLAIM: private,
            "nbf": now,
            "sub": f"{PREFIX}{meta['namespace']}:{meta['name']}",
        }
        return await self.signer.sign(claims), now


class ServiceAccountTokens:
    """The bearer-token authenticator of service-account JWTs."""

    def __init__(
        self,
        keys: KeySource,
        issuers: Sequence[str],
        audiences: Sequence[str],
        lookup: Lookup | None,
        clock: Callable[[], float] = time.time,
        stale: Callable[[], None] = lambda: None,
    ) -> None:
        self.keys = keys
        self.issuers = tuple(issuers)
        self.audiences = tuple(audiences)
        self.lookup = lookup
        self.clock = clock
        self.stale = stale  # counts a stale token's use (serviceaccount_stale_tokens_total)

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        peeked = issuer_of(token)
        if peeked is None or peeked[0] not in self.issuers:
            return None  # not a JWT of ours: another method's token
        header = peeked[1]
        claims = await self._verify(token, header)
        accepted = accepted_audiences(claims, audiences or self.audiences, self.audiences)
        user = await self._user(claims)
        return AuthResponse(user, accepted, annotations=self._staleness(claims, user.name))

    def _staleness(self, claims: Obj, subject: str) -> tuple[tuple[str, str], ...]:
        """A pod's token extended past what it asked for (--service-account-extend-token-
        expiration) still works after ``warnafter``, but is audited and counted as stale."""
        warn_after = (claims.get(CLAIM) or {}).get(WARN_AFTER)
        now = int(self.clock())
        if not isinstance(warn_after, int | float) or not warn_after or now <= warn_after:
            return ()
        self.stale()
        late = now - int(warn_after)
        return ((STALE, f"subject: {subject}, seconds after warning threshold: {late}"),)

    async def _verify(self, token: str, header: Obj) -> Obj:
        claims = await signed_claims(token, header, self.keys, _SIGNATURE)
        now = self.clock()  # times checked here, on the server's clock
        if not isinstance(claims["exp"], int | float) or now > claims["exp"] + LEEWAY:
            raise AuthenticationError("service account token has expired")
        if isinstance(claims.get("nbf"), int | float) and claims["nbf"] > now + LEEWAY:
            raise AuthenticationError("service account token is not valid yet")
        return claims

    async def _user(self, claims: Obj) -> UserInfo:
        private = claims.get(CLAIM) or {}
        namespace = private.get("namespace", "")
        account = private.get("serviceaccount") or {}
        if claims.get("sub") != f"{PREFIX}{namespace}:{account.get('name')}":
            raise AuthenticationError("sub does not match the service account")
        extra: dict[str, tuple[str, ...]] = {}
        await self._check(namespace, "ServiceAccount", account)
        for kind in ("pod", "secret"):
            ref = private.get(kind)
            if ref:
                await self._check(namespace, kind.capitalize(), ref)
                if kind == "pod":
                    extra[EXTRA + "pod-name"] = (ref.get("name", ""),)
                    extra[EXTRA + "pod-uid"] = (ref.get("uid", ""),)
        node = private.get("node")
        if node:
            if not private.get("pod"):  # a Node-bound token lives as long as its node
                await self._check("", "Node", node)
            extra[EXTRA + "node-name"] = (node.get("name", ""),)
            if node.get("uid"):
                extra[EXTRA + "node-uid"] = (node["uid"],)
        if claims.get("jti"):
            extra[EXTRA + "credential-id"] = (f"JTI={claims['jti']}",)
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")
        return UserInfo(claims["sub"], account.get("uid", ""), groups, extra)

    async def _check(self, namespace: str, kind: str, ref: Obj) -> None:
        """With lookup on, the referenced object must exist with the token's uid."""
        if self.lookup is None:
            return
        name = ref.get("name", "")
        obj = await self.lookup(namespace, kind, name)
        if obj is None:
            raise AuthenticationError(f"{kind.lower()} {namespace}/{name} has been deleted")
        if ref.get("uid") and obj["metadata"].get("uid") != ref["uid"]:
            raise AuthenticationError(
                f"{kind} UID ({obj['metadata'].get('uid')}) does not match claim ({ref['uid']})"
            )
