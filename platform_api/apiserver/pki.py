"""The embedded default PKI: a CA, a serving certificate and an admin kubeconfig.

Created under the certificate directory on first start and reused afterwards, so
``scripts/run`` gives a working, authenticated server with no flags.  Keys are ECDSA
P-256 (fast handshakes; supported by kubectl and the Python client).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import socket
import tempfile
from dataclasses import dataclass

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from platform_api import pem
from platform_api.privatefiles import private_dir

ADMIN_USER = "platform-admin"
ADMIN_GROUP = "system:masters"
CLUSTER_NAME = "platform"
_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Paths:
    ca_cert: str
    ca_key: str
    serving_cert: str
    serving_key: str
    admin_cert: str
    admin_key: str

    @classmethod
    def under(cls, cert_dir: str) -> Paths:
        def at(name: str) -> str:
            return os.path.join(cert_dir, name)

        return cls(
            at("ca.crt"),
            at("ca.key"),
            at("apiserver.crt"),
            at("apiserver.key"),
            at("admin.crt"),
            at("admin.key"),
        )


def _write(path: str, data: bytes, private: bool = False) -> None:
    """Replace ``path`` atomically.  The temporary file is unique: every worker of
    ``--workers`` writes the admin kubeconfig as it starts, and with one shared name
    a worker's rename could find the file already renamed by its sibling."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-")
    os.fchmod(fd, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _load(
    cert_path: str, key_path: str
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    if not (os.path.exists(cert_path) and os.path.exists(key_path)):
        return None
    with open(cert_path, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    with open(key_path, "rb") as f:
        key = pem.load_private_key(f.read())
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if cert.not_valid_after_utc < datetime.datetime.now(datetime.UTC) + _DAY:
        return None  # expiring: make a new one
    return cert, key


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey, days: int
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + days * _DAY)
    )


def _ca(paths: Paths) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    loaded = _load(paths.ca_cert, paths.ca_key)
    if loaded:
        return loaded
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "platform-ca")])
    cert = (
        _builder(name, name, key.public_key(), 3650)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(paths.ca_key, _key_pem(key), private=True)
    _write(paths.ca_cert, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _leaf(
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
    cert_path: str,
    key_path: str,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    names: list[x509.GeneralName] | None = None,
) -> None:
    loaded = _load(cert_path, key_path)
    if loaded and loaded[0].issuer == ca[0].subject:
        if names is None:
            return
        try:
            current = (
                loaded[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            )
            if all(n in current for n in names):
                return
        except x509.ExtensionNotFound:
            pass
    key = ec.generate_private_key(ec.SECP256R1())
    builder = _builder(subject, ca[0].subject, key.public_key(), 365).add_extension(
        x509.ExtendedKeyUsage([usage]), critical=False
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca[1], hashes.SHA256())
    _write(key_path, _key_pem(key), private=True)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))


def serving_names(bind_address: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    hostname = socket.gethostname()
    if hostname and hostname != "localhost":
        names.append(x509.DNSName(hostname))
    if bind_address not in ("0.0.0.0", "::", ""):
        address = x509.IPAddress(ipaddress.ip_address(bind_address))
        if address not in names:
            names.append(address)
    return names


def ensure_pki(cert_dir: str, bind_address: str) -> Paths:
    """Create whatever of the default PKI is missing or expiring; returns its paths."""
    private_dir(cert_dir, ours=False)  # --cert-dir may name it
    paths = Paths.under(cert_dir)
    ca = _ca(paths)
    _leaf(
        ca,
        paths.serving_cert,
        paths.serving_key,
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "platform-apiserver")]),
        ExtendedKeyUsageOID.SERVER_AUTH,
        serving_names(bind_address),
    )
    _leaf(
        ca,
        paths.admin_cert,
        paths.admin_key,
        x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, ADMIN_GROUP),
                x509.NameAttribute(NameOID.COMMON_NAME, ADMIN_USER),
            ]
        ),
        ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    return paths


def _b64(path: str) -> str:
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def write_admin_kubeconfig(path: str, server: str, paths: Paths) -> None:
    """An admin kubeconfig (embedded credentials) for ``server``; rewritten every start."""
    context = f"{ADMIN_USER}@{CLUSTER_NAME}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CLUSTER_NAME,
                "cluster": {"server": server, "certificate-authority-data": _b64(paths.ca_cert)},
            }
        ],
        "users": [
            {
                "name": ADMIN_USER,
                "user": {
                    "client-certificate-data": _b64(paths.admin_cert),
                    "client-key-data": _b64(paths.admin_key),
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": CLUSTER_NAME, "user": ADMIN_USER}}],
        "current-context": context,
        "preferences": {},
    }
    _write(path, yaml.safe_dump(config, sort_keys=False).encode(), private=True)


def ensure_service_account_key(cert_dir: str) -> str:
    """The key that signs service-account tokens when no flag names one (RSA, as kubeadm's)."""
    path = os.path.join(cert_dir, "sa.key")
    if not os.path.exists(path):
        private_dir(cert_dir, ours=False)  # --cert-dir may name it
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write(path, _key_pem(key), private=True)
    return path
