"""Each local provider round-trips with kube's byte layout, prefixes, rotation and errors."""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from platform_api.storage.encryption import providers as p
from platform_api.storage.transformer import TransformError

KEY = b"/core/secrets/default/s"
DATA = b'{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}'


@pytest.mark.parametrize(
    ("kind", "size", "prefix"),
    [
        ("aescbc", 32, b"k8s:enc:aescbc:v1:k1:"),
        ("aescbc", 16, b"k8s:enc:aescbc:v1:k1:"),
        ("aesgcm", 24, b"k8s:enc:aesgcm:v1:k1:"),
        ("secretbox", 32, b"k8s:enc:secretbox:v1:k1:"),
    ],
)
def test_round_trip_and_prefix(kind: str, size: int, prefix: bytes) -> None:
    provider = p.keyed(kind, [("k1", os.urandom(size))])
    choice = p.PrefixChoice([provider], "no matching prefix found")
    stored = choice.to_storage(KEY, DATA)
    assert stored.startswith(prefix)
    assert b"password" not in stored and b"aHVudGVyMg" not in stored
    assert choice.from_storage(KEY, stored) == (DATA, False)
    assert choice.to_storage(KEY, DATA) != stored  # a random IV / nonce per write


def test_aescbc_layout_is_kubes() -> None:
    """IV then PKCS#7-padded CBC: decrypt by hand as kube's Go code would."""
    secret = os.urandom(32)
    stored = p.AESCBC(secret).to_storage(KEY, DATA)
    iv, body = stored[:16], stored[16:]
    d = Cipher(algorithms.AES(secret), modes.CBC(iv)).decryptor()
    plain = d.update(body) + d.finalize()
    assert plain[: len(DATA)] == DATA and plain[len(DATA) :] == bytes([plain[-1]]) * plain[-1]


def test_aesgcm_layout_uses_key_as_additional_data() -> None:
    secret = os.urandom(32)
    stored = p.AESGCMTransformer(secret).to_storage(KEY, DATA)
    assert AESGCM(secret).decrypt(stored[:12], stored[12:], KEY) == DATA
    with pytest.raises(TransformError, match=r"^cipher: message authentication failed$"):
        p.AESGCMTransformer(secret).from_storage(b"/core/secrets/other/x", stored)


def test_rotation_first_key_writes_all_keys_read_stale() -> None:
    old, new = os.urandom(32), os.urandom(32)
    before = p.PrefixChoice([p.keyed("aescbc", [("old", old)])], "x")
    written_old = before.to_storage(KEY, DATA)
    after = p.PrefixChoice([p.keyed("aescbc", [("new", new), ("old", old)])], "x")
    assert after.from_storage(KEY, written_old) == (DATA, True)  # read, stale
    written_new = after.to_storage(KEY, DATA)
    assert written_new.startswith(b"k8s:enc:aescbc:v1:new:")
    assert after.from_storage(KEY, written_new) == (DATA, False)


def test_provider_rotation_and_identity() -> None:
    box = p.keyed("secretbox", [("b", os.urandom(32))])
    identity = p.Prefixed(b"", p.Identity())
    choice = p.PrefixChoice([box, identity], "no matching prefix found")
    assert choice.from_storage(KEY, DATA) == (DATA, True)  # plaintext, stale: identity is 2nd
    migrating = p.PrefixChoice([identity, box], "no matching prefix found")
    assert migrating.to_storage(KEY, DATA) == DATA
    assert migrating.from_storage(KEY, choice.to_storage(KEY, DATA)) == (DATA, True)


def test_unknown_prefix_without_identity_is_kubes_error() -> None:
    choice = p.PrefixChoice(
        [p.keyed("aesgcm", [("k", os.urandom(16))])], "no matching prefix found"
    )
    with pytest.raises(TransformError, match=r"^no matching prefix found$"):
        choice.from_storage(KEY, DATA)


def test_wrong_key_errors() -> None:
    good = p.PrefixChoice([p.keyed("secretbox", [("k", os.urandom(32))])], "x")
    stored = good.to_storage(KEY, DATA)
    wrong = p.PrefixChoice([p.keyed("secretbox", [("k", os.urandom(32))])], "x")
    with pytest.raises(TransformError, match=r"^output array was not large enough for encryption$"):
        wrong.from_storage(KEY, stored)
    other_name = p.PrefixChoice([p.keyed("secretbox", [("z", os.urandom(32))])], "x")
    with pytest.raises(
        TransformError, match=r"^no matching key was found for the provided Secretbox transformer$"
    ):
        other_name.from_storage(KEY, stored)
    cbc = p.PrefixChoice([p.keyed("aescbc", [("k", os.urandom(32))])], "x")
    with pytest.raises(
        TransformError, match=r"^no matching key was found for the provided AES transformer$"
    ):
        cbc.from_storage(KEY, b"k8s:enc:aescbc:v1:nope:" + b"0" * 32)


def test_aescbc_corrupt_values() -> None:
    cbc = p.AESCBC(os.urandom(32))
    with pytest.raises(TransformError, match=r"shorter than the required size"):
        cbc.from_storage(KEY, b"short")
    with pytest.raises(TransformError, match=r"not a multiple of the block size"):
        cbc.from_storage(KEY, os.urandom(16 + 7))


def test_identity_refuses_encrypted_data() -> None:
    with pytest.raises(
        TransformError, match=r"^identity transformer tried to read encrypted data$"
    ):
        p.Identity().from_storage(KEY, b"k8s:enc:aescbc:v1:k:xxxx")
