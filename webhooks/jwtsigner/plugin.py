"""The signer's gRPC service over a unix socket (kube's ``v1.ExternalJWTSigner``)."""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

import grpc
import jwt
from cryptography.hazmat.primitives import serialization

from platform_api import pem
from platform_api.authentication import externaljwt_proto as pb
from platform_api.authentication.serviceaccount import PrivateKey, algorithm, key_id
from webhooks.grpcplugin import Methods, serve_unix

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.S)


def load_private_keys(path: str) -> list[PrivateKey]:
    """Every private key of a PEM file, in order; an RSA or ECDSA one at least."""
    with open(path, "rb") as f:
        data = f.read()
    keys: list[Any] = [pem.load_private_key(m.group(0)) for m in _PEM_BLOCK.finditer(data)]
    if not keys:
        raise ValueError(f"{path}: no private keys")
    return keys


class LocalKeys:
    """The signing keys from the key files, read on every call (rotation)."""

    def __init__(
        self, path: str, retired: str | None, max_expiration: int, refresh_hint: int
    ) -> None:
        self.path, self.retired = path, retired
        self.max_expiration, self.refresh_hint = max_expiration, refresh_hint

    def keys(self) -> tuple[list[PrivateKey], list[PrivateKey]]:
        current = load_private_keys(self.path)
        return current, load_private_keys(self.retired) if self.retired else []

    def sign(self, request: Any, context: Any) -> Any:
        key = self.keys()[0][0]
        header = {"alg": algorithm(key), "kid": key_id(key.public_key()), "typ": "JWT"}
        encoded = _b64(json.dumps(header, separators=(",", ":")).encode())
        signing_input = f"{encoded}.{request.claims}".encode()
        signature = jwt.get_algorithm_by_name(header["alg"]).sign(signing_input, key)
        return pb.SignJWTResponse(header=encoded, signature=_b64(signature))

    def fetch_keys(self, request: Any, context: Any) -> Any:
        current, retired = self.keys()
        keys = [_key(k, False) for k in current] + [_key(k, True) for k in retired]
        response = pb.FetchKeysResponse(keys=keys, refresh_hint_seconds=self.refresh_hint)
        stamp = max(os.stat(p).st_mtime for p in (self.path, self.retired) if p)
        response.data_timestamp.seconds = int(stamp)
        response.data_timestamp.nanos = int(stamp % 1 * 1e9)
        return response

    def metadata(self, request: Any, context: Any) -> Any:
        return pb.MetadataResponse(max_token_expiration_seconds=self.max_expiration)


def _key(key: PrivateKey, retired: bool) -> Any:
    public = key.public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pb.Key(key_id=key_id(public), key=der, exclude_from_oidc_discovery=retired)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def serve(
    socket_path: str,
    key_file: str,
    *,
    retired: str | None = None,
    max_expiration: int = 365 * 24 * 3600,
    refresh_hint: int = 60,
    workers: int = 4,
) -> grpc.Server:
    """Start serving (in grpc's threads); the caller waits or stops it."""
    keys = LocalKeys(key_file, retired, max_expiration, refresh_hint)
    keys.keys()  # refuse to start without a usable key

    def serialize(message: Any) -> bytes:
        return bytes(message.SerializeToString())

    handlers = {"Sign": keys.sign, "FetchKeys": keys.fetch_keys, "Metadata": keys.metadata}
    methods: Methods = {
        name: (fn, pb.METHODS[name][0].FromString, serialize) for name, fn in handlers.items()
    }
    return serve_unix(socket_path, pb.SERVICE, methods, workers)
