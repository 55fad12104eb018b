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


def certificate_options(key_pem: bytes, cert_pem: bytes) -> dict[str, Any]:
    """``privateKey``, ``certificate`` and ``extraCertChain`` (the rest of the PEM's
    chain) for ``CertificateOptions`` / ``optionsForClientTLS(extraCertificateOptions=)``."""
    chain = x509.load_pem_x509_certificates(cert_pem)
    key = serialization.load_pem_private_key(key_pem, password=None)
    options: dict[str, Any] = {"privateKey": key, "certificate": chain[0]}
    if len(chain) > 1:
        options["extraCertChain"] = chain[1:]
    return options
