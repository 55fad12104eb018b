"""The local providers (identity, aescbc, aesgcm, secretbox) and kube's prefix choice.

Byte layouts are kube's, so a value written here reads there and back:
``k8s:enc:<provider>:v1:<key name>:`` then, for aescbc, a 16-byte IV and the PKCS#7
padded ciphertext; for aesgcm a 12-byte random nonce and the sealed data (the key the
storage names, its etcd key on etcd, as additional data); for secretbox a 24-byte nonce
and the XSalsa20-Poly1305 box.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import nacl.exceptions
import nacl.secret
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from platform_api.storage.transformer import AUTHENTICATED_PREFIXES, TransformError

ENCRYPTED_PREFIX = b"k8s:enc:"
AESCBC_PREFIX = b"k8s:enc:aescbc:v1:"
AESGCM_PREFIX, KMS_V2_PREFIX = AUTHENTICATED_PREFIXES
SECRETBOX_PREFIX = b"k8s:enc:secretbox:v1:"
_BLOCK = 16
_GCM_NONCE = 12


class Transformer(Protocol):
    """One provider or key: ``key`` is the authenticated data (the storage key)."""

    def to_storage(self, key: bytes, data: bytes) -> bytes: ...

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]: ...


class Identity:
    """Writes plaintext; refuses to read a value some provider encrypted."""

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        return data

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return data, False


class AESCBC:
    def __init__(self, secret: bytes) -> None:
        self._algorithm = algorithms.AES(secret)

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        iv = os.urandom(_BLOCK)
        pad = _BLOCK - len(data) % _BLOCK
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(data + bytes((pad,)) * pad) + encryptor.finalize()

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        if len(data) < _BLOCK:
            raise TransformError("the stored data was shorter than the required size")
        iv, body = data[:_BLOCK], data[_BLOCK:]
        if len(body) % _BLOCK:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(iv)).decryptor()
        plain = decryptor.update(body) + decryptor.finalize()
        pad = plain[-1] if plain else 0
        if pad == 0 or pad > len(plain):
            raise TransformError("invalid PKCS7 data (empty or not padded)")
        if plain[-pad:] != bytes((pad,)) * pad:
            raise TransformError("invalid padding on input")
        return plain[:-pad], False


class AESGCMTransformer:
    """AES-GCM with a random 12-byte nonce (kube's ``NewGCMTransformer``)."""

    def __init__(self, secret: bytes) -> None:
        self._aead = AESGCM(secret)

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        nonce = os.urandom(_GCM_NONCE)
        return nonce + self._aead.encrypt(nonce, data, key)

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        if len(data) < _GCM_NONCE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._aead.decrypt(data[:_GCM_NONCE], data[_GCM_NONCE:], key), False
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None


class Secretbox:
    def __init__(self, secret: bytes) -> None:
        self._box = nacl.secret.SecretBox(secret)

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        return bytes(self._box.encrypt(data))  # nonce || Poly1305 tag || ciphertext

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        if len(data) < nacl.secret.SecretBox.NONCE_SIZE + nacl.secret.SecretBox.MACBYTES:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._box.decrypt(data), False
        except nacl.exceptions.CryptoError:
            raise TransformError("output array was not large enough for encryption") from None


@dataclass(frozen=True)
class Prefixed:
    prefix: bytes
    transformer: Transformer


class PrefixChoice:
    """kube's ``prefixTransformers``: the first entry writes (its prefix prepended);
    a read goes to the entry whose prefix the value has, and is stale unless that is
    the first.  An empty prefix (identity) matches anything and is skipped on error."""

    def __init__(self, entries: Sequence[Prefixed], no_match: str) -> None:
        self.entries = list(entries)
        self._no_match = no_match

    def to_storage(self, key: bytes, data: bytes) -> bytes:
        first = self.entries[0]
        return first.prefix + first.transformer.to_storage(key, data)

    def from_storage(self, key: bytes, data: bytes) -> tuple[bytes, bool]:
        errors: list[str] = []
        for i, entry in enumerate(self.entries):
            if not data.startswith(entry.prefix):
                continue
            try:
                plain, stale = entry.transformer.from_storage(key, data[len(entry.prefix) :])
            except TransformError as e:
                if entry.prefix:
                    errors.append(str(e))
                continue
            return plain, stale or i != 0
        if errors:
            raise TransformError(_aggregate(errors))
        raise TransformError(self._no_match)


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several bracketed."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


_FACTORIES: dict[str, tuple[bytes, type, str]] = {
    "aescbc": (AESCBC_PREFIX, AESCBC, "AES"),
    "aesgcm": (AESGCM_PREFIX, AESGCMTransformer, "AES"),
    "secretbox": (SECRETBOX_PREFIX, Secretbox, "Secretbox"),
}


def keyed(provider: str, keys: Sequence[tuple[str, bytes]]) -> Prefixed:
    """A provider over named keys: ``<provider prefix><name>:`` per key, first writes."""
    prefix, factory, label = _FACTORIES[provider]
    entries = [Prefixed(name.encode() + b":", factory(secret)) for name, secret in keys]
    no_match = f"no matching key was found for the provided {label} transformer"
    return Prefixed(prefix, PrefixChoice(entries, no_match))
