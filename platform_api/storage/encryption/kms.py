"""KMS v2 envelope encryption with key derivation (kube's KMSv2KDF, the default).

The plugin is called rarely: once per process (and per key ID rotation) to encrypt a
fresh 32-byte seed, and once per distinct stored seed to decrypt it.  Every write
derives its own AES-GCM key, HKDF-SHA256(seed, 32 random "info" bytes), so nonces never
repeat under one key.  Stored after ``k8s:enc:kms:v2:<name>:`` is the EncryptedObject
protobuf: encryptedData = info || nonce || sealed data, keyID, encryptedDEKSource (the
plugin's ciphertext of the seed), annotations, encryptedDEKSourceType = 1.

Status and Encrypt run as gRPC futures resolved on the reactor thread.  Decrypting a
seed not yet cached happens on a read, which is synchronous: one short unix-socket call
bounded by the provider's timeout, once per seed.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import grpc
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from platform_api.grpcunix import Parse, Serialize, UnaryClient, rpc_text
from platform_api.storage.encryption import kmsproto as pb
from platform_api.storage.transformer import TransformError
from platform_api.uid import new_uid

log = Logger()
SEED_SIZE = INFO_SIZE = 32
_NONCE = 12
_MAX_KEY_ID = 1024
_MAX_DEK_SOURCE = 1024
# kube's kmsv2PluginHealthz{Positive,Negative}Interval, WriteDEKSourceMaxTTL, healthz TTLs.
POSITIVE_INTERVAL = 60.0
NEGATIVE_INTERVAL = 10.0
WRITE_TTL = 180.0
POSITIVE_TTL = 20.0
NEGATIVE_TTL = 3.0


class KMSClient:
    """The three calls of ``v2.KeyManagementService`` over ``unix://`` (no TLS)."""

    def __init__(self, endpoint: str, timeout: float) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        path = endpoint.split("://", 1)[-1]
        methods: dict[str, tuple[Serialize, Parse]] = {
            name: (lambda m: m.encode(), response.decode)
            for name, response in (
                ("Status", pb.StatusResponse),
                ("Encrypt", pb.EncryptResponse),
                ("Decrypt", pb.DecryptResponse),
            )
        }
        self._client = UnaryClient(f"unix://{path}", pb.SERVICE, methods)

    def call(self, name: str, request: Any) -> Any:
        """A blocking call: for reads, which run synchronously, and for start-up."""
        return self._client.call(name, request, self.timeout)

    def call_async(self, name: str, request: Any, reactor: Any) -> Deferred[Any]:
        """The call as a Deferred fired on the reactor thread; the reactor never waits."""
        return self._client.call_async(name, request, self.timeout, reactor)

    def close(self) -> None:
        self._client.close()


def _derive(seed: bytes, info: bytes) -> AESGCM:
    """HKDF-Expand(SHA-256, seed, info) -> a one-write AES-256-GCM key."""
    return AESGCM(HKDFExpand(algorithm=hashes.SHA256(), length=32, info=info).derive(seed))


# Reads of the same value (a hot Secret) skip the derivation; writes never repeat an info.
_derived = lru_cache(maxsize=4096)(_derive)


def seal(seed: bytes, key: bytes, data: bytes) -> bytes:
    info, nonce = os.urandom(INFO_SIZE), os.urandom(_NONCE)
    return info + nonce + _derive(seed, info).encrypt(nonce, data, key)


def unseal(seed: bytes, key: bytes, data: bytes) -> bytes:
    if len(data) < INFO_SIZE:
        raise TransformError("the stored data was shorter than the required size")
    info, body = data[:INFO_SIZE], data[INFO_SIZE:]
    if len(body) < _NONCE:
        raise TransformError("the stored data was shorter than the required size")
    try:
        return _derived(seed, info).decrypt(body[:_NONCE], body[_NONCE:], key)
    except InvalidTag:
        raise TransformError("cipher: message authentication failed") from None


def validate(obj: pb.EncryptedObject) -> None:
    """kube's ``ValidateEncryptedObject`` (annotation key checks left out)."""
    if obj.encrypted_dek_source_type not in (pb.AES_GCM_KEY, pb.HKDF_SHA256_XNONCE_AES_GCM_SEED):
        raise TransformError(f"unknown encryptedDEKSourceType: {obj.encrypted_dek_source_type}")
    if not obj.encrypted_data:
        raise TransformError("encrypted data is empty")
    source = obj.encrypted_dek_source
    if not source:
        raise TransformError(
            "failed to validate encrypted DEK source: encrypted DEK source is empty"
        )
    if len(source) > _MAX_DEK_SOURCE:
        raise TransformError(
            f"failed to validate encrypted DEK source: encrypted DEK source is {len(source)} "
            f"bytes, which exceeds the max size of {_MAX_DEK_SOURCE}"
        )
    if not obj.key_id:
        raise TransformError("failed to validate key id: keyID is empty")
    if len(obj.key_id) > _MAX_KEY_ID:
        raise TransformError(
            f"failed to validate key id: keyID is {len(obj.key_id)} bytes, which exceeds "
            f"the max size of {_MAX_KEY_ID}"
        )


@dataclass(frozen=True)
class State:
    """The seed that writes now, as the plugin encrypted it."""

    seed: bytes
    key_id: str
    encrypted_seed: bytes
    annotations: dict[str, bytes]
    expires: float


class KMSv2Envelope:
    """One ``kms`` provider (apiVersion v2): the transformer and its health probe."""

    def __init__(
        self,
        name: str,
        client: KMSClient,
        reactor: Any,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.client = client
        self._reactor = reactor
        self._clock = clock
        self.state: State | None = None
        self._seeds: dict[tuple[bytes, str, tuple[tuple[str, bytes], ...]], bytes] = {}
        self.version = ""
        self.last_error: str | None = "not yet probed"
        self._checked_at = float("-inf")
        self._probing = False

    # -- the transformer ---------------------------------------------------------------

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        state = self.state
        if state is None:
            raise TransformError("got unexpected nil transformer")
        now = self._clock()
        if now > state.expires:
            raise TransformError(
                f"encryptedDEKSource with keyID hash {key_id_hash(state.key_id)!r} expired at "
                f"{_rfc3339(state.expires)} (current time is {_rfc3339(now)})"
            )
        return pb.EncryptedObject(
            seal(state.seed, key, data),
            state.key_id,
            state.encrypted_seed,
            state.annotations,
            pb.HKDF_SHA256_XNONCE_AES_GCM_SEED,
        ).encode()

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        try:
            obj = pb.EncryptedObject.decode(data)
        except ValueError as e:
            raise TransformError(str(e)) from None
        validate(obj)
        seed = self._seed(obj)
        if obj.encrypted_dek_source_type == pb.HKDF_SHA256_XNONCE_AES_GCM_SEED:
            plain = unseal(seed, key, obj.encrypted_data)
        else:  # a per-process DEK (KMSv2KDF off in the writer)
            if len(obj.encrypted_data) < _NONCE:
                raise TransformError("the stored data was shorter than the required size")
            try:
                plain = AESGCM(seed).decrypt(
                    obj.encrypted_data[:_NONCE], obj.encrypted_data[_NONCE:], key
                )
            except InvalidTag:
                raise TransformError("cipher: message authentication failed") from None
        state = self.state
        stale = (
            state is None
            or obj.key_id != state.key_id
            or obj.encrypted_dek_source_type != pb.HKDF_SHA256_XNONCE_AES_GCM_SEED
        )
        return plain, stale

    def _seed(self, obj: pb.EncryptedObject) -> bytes:
        cache_key = (obj.encrypted_dek_source, obj.key_id, tuple(sorted(obj.annotations.items())))
        seed = self._seeds.get(cache_key)
        if seed is None:
            request = pb.DecryptRequest(
                obj.encrypted_dek_source, new_uid(), obj.key_id, obj.annotations
            )
            try:
                seed = self.client.call("Decrypt", request).plaintext
            except grpc.RpcError as e:
                raise TransformError(f"failed to decrypt DEK, error: {rpc_text(e)}") from None
            self._seeds[cache_key] = seed
        return seed

    # -- the probe: Status, then a new seed when the key ID changed ---------------------

    def prime(self) -> None:
        """The first probe, blocking: at start-up, before the server serves (as kube)."""
        try:
            status = self.client.call("Status", pb.StatusRequest())
            self._checked(status, self._rotate_blocking(status))
        except _Recorded:
            pass
        except Exception as e:
            self._failed(e)

    def _rotate_blocking(self, status: pb.StatusResponse) -> State | None:
        if not self._needs_rotation(status):
            return None
        seed = os.urandom(SEED_SIZE)
        try:
            response = self.client.call("Encrypt", pb.EncryptRequest(seed, new_uid()))
            return self._new_state(seed, response)
        except Exception as e:
            self._rotation_failed(e)
            raise _Recorded() from None

    def probe(self) -> Deferred[None]:
        """Status (and, on a new key ID, Encrypt of a fresh seed) without blocking."""
        if self._probing:
            return Deferred.fromCoroutine(_noop())
        self._probing = True
        return Deferred.fromCoroutine(self._probe())

    async def _probe(self) -> None:
        try:
            status = await self.client.call_async("Status", pb.StatusRequest(), self._reactor)
            new_state = None
            if self._needs_rotation(status):
                seed = os.urandom(SEED_SIZE)
                request = pb.EncryptRequest(seed, new_uid())
                try:
                    response = await self.client.call_async("Encrypt", request, self._reactor)
                    new_state = self._new_state(seed, response)
                except Exception as e:
                    self._rotation_failed(e)
                    return
            self._checked(status, new_state)
        except Exception as e:
            self._failed(e)
        finally:
            self._probing = False

    def _rotation_failed(self, error: Exception) -> None:
        text = rpc_text(error)
        self._record(
            f"kmsv2 Provider {self.name} is not healthy, error: failed to rotate DEK: "
            f"failed to encrypt DEK, error: {text}"
        )

    def _needs_rotation(self, status: pb.StatusResponse) -> bool:
        if not status.key_id:
            return False  # reported as an invalid key ID; the current seed stays
        return self.state is None or self.state.key_id != status.key_id

    def _new_state(self, seed: bytes, response: pb.EncryptResponse) -> State:
        state = State(
            seed,
            response.key_id,
            response.ciphertext,
            dict(response.annotations),
            self._clock() + WRITE_TTL,
        )
        validate(pb.EncryptedObject(b"\0", state.key_id, state.encrypted_seed))
        self._seeds[
            (state.encrypted_seed, state.key_id, tuple(sorted(state.annotations.items())))
        ] = seed
        return state

    def _checked(self, status: pb.StatusResponse, new_state: State | None) -> None:
        errors = []
        if status.healthz != "ok":
            errors.append(f"got unexpected healthz status: {status.healthz}")
        if status.version not in ("v2", "v2beta1"):
            errors.append(f"expected KMSv2 API version v2, got {status.version}")
        else:
            self.version = self.version or status.version
            if self.version != status.version:
                errors.append(
                    "KMSv2 API version should not change after the initial status response "
                    f"version {self.version}, got {status.version}"
                )
        if not status.key_id:
            errors.append('got invalid KMSv2 KeyID hash "": keyID is empty')
        elif new_state is not None and new_state.key_id != status.key_id:
            errors.append(
                f"failed to rotate DEK: encrypt returned key ID hash {key_id_hash(new_state.key_id)!r}"
            )
        elif new_state is not None:
            self.state = new_state
        elif self.state is not None:
            self.state = replace(self.state, expires=self._clock() + WRITE_TTL)
        if errors:
            text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            self._record(f"kmsv2 Provider {self.name} is not healthy, error: {text}")
        else:
            self._record(None)

    def _failed(self, error: Exception) -> None:
        text = rpc_text(error)
        self._record(
            "failed to perform status section of the healthz check for KMS Provider "
            f"{self.name}, error: {text}"
        )

    def _record(self, error: str | None) -> None:
        if error and error != self.last_error:
            log.warn("kms plugin failed health check probe: {error}", error=error)
        self.last_error = error
        self._checked_at = self._clock()

    def health(self) -> str | None:
        """The last probe's answer; an older one than kube's healthz TTL starts a new probe."""
        ttl = NEGATIVE_TTL if self.last_error else POSITIVE_TTL
        if self._clock() - self._checked_at >= ttl:
            self.probe()
        return self.last_error

    def next_interval(self) -> float:
        return NEGATIVE_INTERVAL if self.last_error else POSITIVE_INTERVAL


class _Recorded(Exception):
    """The failure is already recorded as the probe's answer."""


async def _noop() -> None:
    return None


def key_id_hash(key_id: str) -> str:
    """kube's ``GetHashIfNotEmpty``: key IDs are logged only as hashes."""
    if not key_id:
        return ""
    return "sha256:" + hashlib.sha256(key_id.encode()).hexdigest()


def _rfc3339(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
