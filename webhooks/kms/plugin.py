"""The plugin's gRPC service over a unix socket (``v2.KeyManagementService``)."""

from __future__ import annotations

import base64
import hashlib
import os
from typing import Any

import grpc
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from platform_api.storage.encryption import kmsproto as pb
from webhooks.grpcplugin import Methods, serve_unix

_NONCE = 12


def key_id(key: bytes) -> str:
    return "key-" + hashlib.sha256(key).hexdigest()[:16]


class LocalKeys:
    """The key encryption keys from the key file, read on every call (rotation)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def keys(self) -> list[bytes]:
        with open(self.path) as f:
            keys = [base64.b64decode(line.strip()) for line in f if line.strip()]
        if not keys:
            raise ValueError(f"no keys in {self.path}")
        return keys

    def status(self, request: pb.StatusRequest, context: Any) -> pb.StatusResponse:
        try:
            current = self.keys()[0]
        except (OSError, ValueError) as e:
            return pb.StatusResponse("v2", f"key file unreadable: {e}", "")
        return pb.StatusResponse("v2", "ok", key_id(current))

    def encrypt(self, request: pb.EncryptRequest, context: Any) -> pb.EncryptResponse:
        key = self.keys()[0]
        nonce = os.urandom(_NONCE)
        sealed = nonce + AESGCM(key).encrypt(nonce, request.plaintext, None)
        return pb.EncryptResponse(sealed, key_id(key), {})

    def decrypt(self, request: pb.DecryptRequest, context: Any) -> pb.DecryptResponse:
        data = request.ciphertext
        for key in self.keys():
            if key_id(key) != request.key_id:
                continue
            try:
                return pb.DecryptResponse(AESGCM(key).decrypt(data[:_NONCE], data[_NONCE:], None))
            except InvalidTag:
                break
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"no key {request.key_id} decrypts this")
        raise AssertionError("unreachable")


def serve(socket_path: str, key_file: str, workers: int = 4) -> grpc.Server:
    """Start serving (in grpc's threads); the caller waits or stops it."""
    keys = LocalKeys(key_file)
    keys.keys()  # refuse to start without a usable key

    def encode(message: Any) -> bytes:
        return bytes(message.encode())

    methods: Methods = {
        "Status": (keys.status, pb.StatusRequest.decode, encode),
        "Encrypt": (keys.encrypt, pb.EncryptRequest.decode, encode),
        "Decrypt": (keys.decrypt, pb.DecryptRequest.decode, encode),
    }
    return serve_unix(socket_path, pb.SERVICE, methods, workers)
