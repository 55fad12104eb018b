"""Private keys load with Go's cheap consistency check instead of OpenSSL's primality test."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from platform_api import pem


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def test_rsa_and_ec_keys_load(rsa_key: rsa.RSAPrivateKey) -> None:
    loaded = pem.load_private_key(_pem(rsa_key))
    assert isinstance(loaded, rsa.RSAPrivateKey)
    assert loaded.private_numbers() == rsa_key.private_numbers()
    ec_key = ec.generate_private_key(ec.SECP256R1())
    assert isinstance(pem.load_private_key(_pem(ec_key)), ec.EllipticCurvePrivateKey)


def test_an_rsa_key_whose_numbers_do_not_fit_is_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    numbers = rsa_key.private_numbers()
    bad = rsa.RSAPrivateNumbers(
        numbers.p,
        numbers.q,
        numbers.d + 2,  # no longer the inverse of e
        numbers.dmp1,
        numbers.dmq1,
        numbers.iqmp,
        numbers.public_numbers,
    ).private_key(unsafe_skip_rsa_key_validation=True)
    with pytest.raises(ValueError, match="invalid RSA private key"):
        pem.load_private_key(_pem(bad))


def test_malformed_and_encrypted_keys_are_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    with pytest.raises(ValueError):
        pem.load_private_key(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    locked = rsa_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    with pytest.raises(TypeError):
        pem.load_private_key(locked)
