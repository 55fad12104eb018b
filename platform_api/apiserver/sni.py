"""``--tls-sni-cert-key``: serving certificates chosen by the name a client asks for.

As kube's dynamiccertificates and Go's ``crypto/tls``: each pair serves the names listed
after its files, or else its certificate's (a CN that is a DNS name but not an IP, and
its DNS SANs; IP SANs never, SNI carries no IPs).  An earlier flag wins a name over a
later one and listed names over a certificate's.  A handshake's name (lowercased, its
trailing dots dropped) is looked up as it is, then with its first label as ``*``; one
without SNI looks up the address it reached.  No match: the --tls-cert-file certificate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.tlsflags import NamedCertKey
from platform_api.gotext import open_error
from platform_api.pem import load_private_key
from platform_api.validation.ips import parse_ip
from platform_api.validation.names import is_dns1123_subdomain

T = TypeVar("T")
_PUBLIC = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


@dataclass(frozen=True)
class Pair:
    """A loaded --tls-sni-cert-key: its PEMs, leaf certificate and the names it serves."""

    key_pem: bytes
    cert_pem: bytes
    names: tuple[str, ...]  # listed on the flag; () takes the certificate's
    leaf: x509.Certificate


def load(named: NamedCertKey) -> Pair:
    """Read and check one pair; ConfigError in kube's words ("failed to load SNI cert
    and key: ..." with Go's reasons)."""
    try:
        cert_pem = _read(named.cert_file)
        key_pem = _read(named.key_file)
        try:
            chain = x509.load_pem_x509_certificates(cert_pem)
        except ValueError:
            raise ValueError("tls: failed to find any PEM data in certificate input") from None
        try:
            key = load_private_key(key_pem)
        except (ValueError, TypeError):
            raise ValueError("tls: failed to find any PEM data in key input") from None
        if key.public_key().public_bytes(*_PUBLIC) != chain[0].public_key().public_bytes(*_PUBLIC):
            raise ValueError("tls: private key does not match public key")
    except ValueError as e:
        raise ConfigError(f"failed to load SNI cert and key: {e}") from None
    return Pair(key_pem, cert_pem, named.names, chain[0])


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:  # Go's *PathError text
        raise ValueError(open_error(path, e)) from None


def certificate_names(cert: x509.Certificate) -> list[str]:
    """kube's getCertificateNames: the CN when it is a DNS name (or ``*``) and not an IP,
    then the DNS SANs."""
    names = []
    cns = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    cn = str(cns[0].value) if cns else ""
    domain = cn == "*" or not is_dns1123_subdomain(cn.removeprefix("*."))
    if cn and parse_ip(cn) is None and domain:
        names.append(cn)
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names.extend(sans.get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        pass
    return names


class NameMap(Generic[T]):
    """Name -> what serves it (a context), built as kube's BuildNamedCertificates."""

    def __init__(self, pairs: Sequence[Pair], serve: Callable[[Pair], T]) -> None:
        self.by_name: dict[str, T] = {}
        listed: dict[str, T] = {}
        for pair in reversed(pairs):  # backwards: earlier pairs overwrite later ones
            value = serve(pair)
            for name in pair.names:
                listed[name] = value
            if not pair.names:
                for name in certificate_names(pair.leaf):
                    self.by_name[name] = value
        self.by_name.update(listed)

    def for_server_name(self, server_name: str) -> T | None:
        """Go's getCertificate: the exact name, then the wildcard of its first label."""
        name = server_name.lower().rstrip(".")
        found = self.by_name.get(name)
        if found is None and name:
            labels = name.split(".")
            labels[0] = "*"
            found = self.by_name.get(".".join(labels))
        return found

    def for_address(self, host: str) -> T | None:
        """A handshake without SNI: the pair that names the address it reached."""
        return self.by_name.get(host)
