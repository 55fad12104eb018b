"""PEM key material as the TLS layer takes it: cryptography objects.

pyOpenSSL 26 deprecates its own X509 and PKey objects in ``Context.use_certificate`` and
friends (a warning on every handshake, an error in a later release); Twisted's
CertificateOptions passes whatever it is given straight through, so every
certificate this server presents or verifies with is loaded here.
"""

from __future__ import annotations

from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes


def load_private_key(data: bytes) -> PrivateKeyTypes:
    """A PEM private key, checked as Go's ``rsa.PrivateKey.Validate`` checks one.

    OpenSSL's own RSA check tests both primes for primality: ~55 ms of CPU per 2048-bit
    key, the largest part of a restart's start-up work (the service-account key is
    RSA).  Go checks only that the numbers fit together, in microseconds; so does this.
    Raises ValueError for a malformed or inconsistent key, TypeError for one that wants
    a password."""
    key = serialization.load_pem_private_key(
        data, password=None, unsafe_skip_rsa_key_validation=True
    )
    if isinstance(key, rsa.RSAPrivateKey):
        numbers = key.private_numbers()
        n, e = numbers.public_numbers.n, numbers.public_numbers.e
        p, q, d = numbers.p, numbers.q, numbers.d
        if p * q != n or p <= 1 or q <= 1 or (e * d) % (p - 1) != 1 or (e * d) % (q - 1) != 1:
            raise ValueError("invalid RSA private key: its numbers do not fit together")
    return key


def certificate_options(key_pem: bytes, cert_pem: bytes) -> dict[str, Any]:
    """``privateKey``, ``certificate`` and ``extraCertChain`` (the rest of the PEM's
    chain) for ``CertificateOptions`` / ``optionsForClientTLS(extraCertificateOptions=)``."""
    chain = x509.load_pem_x509_certificates(cert_pem)
    key = load_private_key(key_pem)
    options: dict[str, Any] = {"privateKey": key, "certificate": chain[0]}
    if len(chain) > 1:
        options["extraCertChain"] = chain[1:]
    return options
