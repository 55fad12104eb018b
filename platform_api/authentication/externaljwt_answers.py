"""What the external JWT signer answers, checked as kube checks it: a FetchKeys answer
(pkg/serviceaccount/externaljwt/plugin/keycache.go) and a Sign answer's header
(plugin.go), refused in kube's words, so a misbehaving signer is an error and never a
key set or a token the server itself would not take."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from platform_api.authentication.serviceaccount import VerifyingKey
from platform_api.codec.bounds import BodyError
from platform_api.codec.text import parse_json
from platform_api.gotext import json_kind, quote

ALGORITHMS = ("RS256", "ES256", "ES384", "ES512")
_MAX_KEY_ID = 1024
_HEADER_FIELDS = ("alg", "kid", "typ")
# google.protobuf.Timestamp's valid range: 0001-01-01 to 9999-12-31.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799


class SignerError(Exception):
    """The signer's answer, or its absence, in kube's words."""

    def __init__(self, message: str, code: str = "unknown-non-grpc") -> None:
        super().__init__(message)
        self.code = code  # grpc-go's name of the status, for the metrics


@dataclass(frozen=True)
class VerificationKeys:
    keys: tuple[VerifyingKey, ...]
    data_timestamp: float  # when the signer read them from its source of truth
    next_refresh: float  # on the reactor's clock


def checked_header(encoded: str) -> str:
    """The key ID of a Sign answer's header, once it is one kube takes."""
    header = _header(encoded)
    if header.get("typ", "") != "JWT":
        raise SignerError("bad type")
    kid = header.get("kid", "")
    if not kid:
        raise SignerError("key id missing")
    if len(kid) > _MAX_KEY_ID:
        raise SignerError("key id longer than 1 kb")
    if header.get("alg", "") not in ALGORITHMS:
        raise SignerError(f"bad signing algorithm {quote(header.get('alg', ''))}")
    return kid


def verification_keys(response: Any, now: float) -> VerificationKeys:
    """kube's checks of a FetchKeys answer, in its order and words."""
    hint = int(response.refresh_hint_seconds)
    if hint <= 0:
        raise SignerError(f"found invalid refresh hint ({hint}s)")
    if not response.keys:
        raise SignerError("found no keys")
    stamp = response.data_timestamp if response.HasField("data_timestamp") else None
    problem = _timestamp_problem(stamp)
    if problem:
        raise SignerError(f"invalid data timestamp: {problem}")
    keys = []
    for key in response.keys:
        if not key.key_id or len(key.key_id) > _MAX_KEY_ID:
            raise SignerError(f"found invalid public key id {quote(key.key_id)}")
        if not key.key:
            raise SignerError("found empty public key")
        keys.append(VerifyingKey(key.key_id, _public_key(key.key), key.exclude_from_oidc_discovery))
    assert stamp is not None
    return VerificationKeys(tuple(keys), stamp.seconds + stamp.nanos / 1e9, now + hint)


def _timestamp_problem(stamp: Any) -> str:
    """timestamppb's CheckValid, in its words ("" when valid)."""
    if stamp is None:
        return "proto: invalid nil Timestamp"
    text = " ".join(
        f"{f}:{v}" for f, v in (("seconds", stamp.seconds), ("nanos", stamp.nanos)) if v
    )
    if stamp.seconds < _MIN_SECONDS:
        return f"proto: timestamp ({text}) before 0001-01-01"
    if stamp.seconds > _MAX_SECONDS:
        return f"proto: timestamp ({text}) after 9999-12-31"
    if not 0 <= stamp.nanos < 1_000_000_000:
        return f"proto: timestamp ({text}) has out-of-range nanos"
    return ""


def _public_key(der: bytes) -> Any:
    """A PKIX (SubjectPublicKeyInfo) key that can verify service-account tokens."""
    try:
        key = serialization.load_der_public_key(der)
    except ValueError:
        raise SignerError(
            "while parsing external public keys: x509: malformed public key"
        ) from None
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise SignerError(
            "while parsing external public keys: x509: unsupported public key type "
            "(only RSA and ECDSA keys verify service-account tokens)"
        )
    return key


def _header(encoded: str) -> dict[str, str]:
    """The signer's header: Go's RawURLEncoding, then a strict decode into
    ``{alg, kid, typ}`` strings (names matched without regard to case, as Go's are)."""
    try:
        raw = _raw_url_decode(encoded)
    except ValueError as e:
        raise SignerError(f"while unwrapping header: {e}") from None
    try:
        value, _ = parse_json(raw)
    except BodyError as e:
        raise SignerError(f"while parsing header JSON: {e}") from None
    if not isinstance(value, dict):
        raise SignerError(
            f"while parsing header JSON: json: cannot unmarshal {json_kind(value)} into Go "
            "value of type struct { Algorithm string; KeyID string; Type string }"
        )
    header: dict[str, str] = {}
    for key, item in value.items():
        name = key.lower()
        if name not in _HEADER_FIELDS:
            raise SignerError(f'while parsing header JSON: json: unknown field "{key}"')
        if item is None:
            continue
        if not isinstance(item, str):
            raise SignerError(
                f"while parsing header JSON: json: cannot unmarshal {json_kind(item)} into "
                f"Go struct field .{name} of type string"
            )
        header[name] = item
    return header


_RAW_URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _raw_url_decode(text: str) -> bytes:
    """Go's ``base64.RawURLEncoding.DecodeString``, with its error text (Python's
    decoder would skip characters outside the alphabet)."""
    for i, c in enumerate(text):
        if c not in _RAW_URL:
            raise ValueError(f"illegal base64 data at input byte {i}")
    if len(text) % 4 == 1:
        raise ValueError(f"illegal base64 data at input byte {len(text) - 1}")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
