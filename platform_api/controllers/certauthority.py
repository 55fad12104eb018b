"""A signer's certificate authority and kube's signing policy (pkg/controller/certificates).

The CA is read from a certificate and key file and read again when either file changes,
as kube's signer reloads a rotated CA without a restart.  Signing follows kube's
permissive policy: the subject and subject alternative names of the request, the
requested usages and nothing else of its extensions, five minutes of backdating, and a
lifetime cut at the CA's own expiry.
"""

from __future__ import annotations

import datetime
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

from platform_api import pem
from platform_api.authentication.x509 import subject_values

BACKDATE = datetime.timedelta(minutes=5)
SHORT = datetime.timedelta(hours=8)  # below this, the backdate is not taken off the lifetime

# kube's usage names -> the bit of Go's x509.KeyUsage they set.
KEY_USAGES = {
    "signing": 0,
    "digital signature": 0,
    "content commitment": 1,
    "key encipherment": 2,
    "data encipherment": 3,
    "key agreement": 4,
    "cert sign": 5,
    "crl sign": 6,
    "encipher only": 7,
    "decipher only": 8,
}
# ... and the extended key usages, in Go's order of x509.ExtKeyUsage (kube sorts by it).
_MICROSOFT_SGC = x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3")
_NETSCAPE_SGC = x509.ObjectIdentifier("2.16.840.1.113730.4.1")
_IPSEC_END_SYSTEM = x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5")
_IPSEC_TUNNEL = x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6")
_IPSEC_USER = x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7")
EXT_KEY_USAGES = {
    "any": (0, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE),
    "server auth": (1, ExtendedKeyUsageOID.SERVER_AUTH),
    "client auth": (2, ExtendedKeyUsageOID.CLIENT_AUTH),
    "code signing": (3, ExtendedKeyUsageOID.CODE_SIGNING),
    "email protection": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "s/mime": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "ipsec end system": (5, _IPSEC_END_SYSTEM),
    "ipsec tunnel": (6, _IPSEC_TUNNEL),
    "ipsec user": (7, _IPSEC_USER),
    "timestamping": (8, ExtendedKeyUsageOID.TIME_STAMPING),
    "ocsp signing": (9, ExtendedKeyUsageOID.OCSP_SIGNING),
    "microsoft sgc": (10, _MICROSOFT_SGC),
    "netscape sgc": (11, _NETSCAPE_SGC),
}

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


class SigningError(Exception):
    """The CA cannot sign this request (kube returns the error and retries)."""


@dataclass(frozen=True)
class Authority:
    certificate: x509.Certificate
    key: SigningKey

    def sign(
        self,
        request: x509.CertificateSigningRequest,
        usages: Iterable[str],
        ttl: datetime.timedelta,
        now: datetime.datetime,
    ) -> bytes:
        """The PEM certificate kube's PermissiveSigningPolicy issues for ``request``."""
        if not request.is_signature_valid:
            raise SigningError("unable to verify certificate request signature")
        not_after_ca = self.certificate.not_valid_after_utc
        not_before = now - BACKDATE
        not_after = now + ttl if ttl < SHORT else now + ttl - BACKDATE
        not_after = min(not_after_ca, not_after)
        if not_before >= not_after_ca:
            raise SigningError(f"the signer has expired: NotAfter={not_after_ca}")
        if now >= not_after_ca:
            raise SigningError(
                f"refusing to sign a certificate that expired in the past: NotAfter={not_after_ca}"
            )
        builder = (
            x509.CertificateBuilder()
            .subject_name(request.subject)
            .issuer_name(self.certificate.subject)
            .public_key(request.public_key())
            .serial_number(secrets.randbits(128) or 1)
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        for extension, critical in _extensions(request, usages, self.certificate):
            builder = builder.add_extension(extension, critical=critical)
        algorithm = None if isinstance(self.key, ed25519.Ed25519PrivateKey) else _hash(self.key)
        cert = builder.sign(self.key, algorithm)
        return cert.public_bytes(serialization.Encoding.PEM)


def _hash(key: SigningKey) -> hashes.SHA256 | hashes.SHA384 | hashes.SHA512:
    """Go's choice of digest for a CA key: SHA-256, or the curve's size for ECDSA."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        if key.curve.key_size == 384:
            return hashes.SHA384()
        if key.curve.key_size == 521:
            return hashes.SHA512()
    return hashes.SHA256()


def _extensions(
    request: x509.CertificateSigningRequest, usages: Iterable[str], ca: x509.Certificate
) -> list[tuple[x509.ExtensionType, bool]]:
    """Key usage (critical), extended key usage, the request's alternative names (critical
    when the subject is empty, as Go marks them) and the CA's key identifier."""
    bits = 0
    extended: dict[int, x509.ObjectIdentifier] = {}
    unknown = []
    for usage in usages:
        if usage in KEY_USAGES:
            bits |= 1 << KEY_USAGES[usage]
        elif usage in EXT_KEY_USAGES:
            order, oid = EXT_KEY_USAGES[usage]
            extended[order] = oid
        else:
            unknown.append(usage)
    if unknown:
        raise SigningError(f"unrecognized usage values: {unknown}")
    out: list[tuple[x509.ExtensionType, bool]] = []
    if bits:
        out.append((x509.UnrecognizedExtension(ExtensionOID.KEY_USAGE, key_usage_der(bits)), True))
    if extended:
        out.append((x509.ExtendedKeyUsage([extended[k] for k in sorted(extended)]), False))
    try:
        names = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        out.append((names, len(request.subject) == 0))
    except x509.ExtensionNotFound:
        pass
    try:
        ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        out.append((x509.AuthorityKeyIdentifier(ski.digest, None, None), False))
    except x509.ExtensionNotFound:
        pass
    return out


def key_usage_der(bits: int) -> bytes:
    """The KeyUsage BIT STRING as Go writes it: bit 0 first, trailing zero bits dropped.
    (cryptography's KeyUsage refuses encipher/decipher only without key agreement, which
    kube signs; so the extension is written here.)"""
    length = bits.bit_length()
    size = (length + 7) // 8
    value = int("".join("1" if bits >> i & 1 else "0" for i in range(length)), 2)
    payload = (value << (size * 8 - length)).to_bytes(size, "big")
    return bytes((0x03, size + 1, size * 8 - length)) + payload


class CAFiles:
    """A CA read from files, read again whenever either file's size or mtime changes."""

    def __init__(self, cert_file: str, key_file: str) -> None:
        self.cert_file, self.key_file = cert_file, key_file
        self._stamp: tuple[float, int, float, int] | None = None
        self._authority: Authority | None = None

    def current(self) -> Authority:
        """The CA as the files are now; raises SigningError when they cannot be used."""
        try:
            c, k = os.stat(self.cert_file), os.stat(self.key_file)
        except OSError as e:
            raise SigningError(f"error reading CA cert file {e.filename!r}: {e.strerror}") from e
        stamp = (c.st_mtime, c.st_size, k.st_mtime, k.st_size)
        if self._authority is None or stamp != self._stamp:
            self._authority = load(self.cert_file, self.key_file)
            self._stamp = stamp
        return self._authority


def load(cert_file: str, key_file: str) -> Authority:
    """The first certificate of ``cert_file`` and the private key of ``key_file``."""
    try:
        with open(cert_file, "rb") as f:
            certs = x509.load_pem_x509_certificates(f.read())
    except (OSError, ValueError) as e:
        raise SigningError(f"error reading CA cert file {cert_file!r}: {e}") from e
    try:
        with open(key_file, "rb") as f:
            key = pem.load_private_key(f.read())
    except (OSError, ValueError, TypeError) as e:  # TypeError: the key wants a password
        raise SigningError(f"error reading CA key file {key_file!r}: {e}") from e
    if isinstance(key, ed448.Ed448PrivateKey) or not isinstance(
        key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
    ):
        raise SigningError(f"error reading CA key file {key_file!r}: unsupported key type")
    return Authority(certs[0], key)


def common_name(request: x509.CertificateSigningRequest) -> str:
    names = subject_values(request.subject, NameOID.COMMON_NAME)
    return names[0] if names else ""
