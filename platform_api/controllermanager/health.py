"""The manager's ``/healthz`` on ``--secure-port`` (kube-controller-manager: 10257).

Like kube without ``--tls-cert-file``, it serves HTTPS with a self-signed certificate
made in memory at start; probes that skip verification (as kubelet's do) read ``ok``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from klein import Klein
from twisted.internet import ssl
from twisted.internet.endpoints import SSL4ServerEndpoint
from twisted.web.server import Site


def self_signed(host: str = "localhost") -> ssl.PrivateCertificate:
    """A serving certificate for ``host``, signed by itself, valid for a year."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(now.timestamp())}")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(host), x509.DNSName("localhost")]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return ssl.PrivateCertificate.loadPEM(key_pem + cert.public_bytes(serialization.Encoding.PEM))


def health_app(checks: dict[str, Callable[[], bool]]) -> Klein:
    """``/healthz``: ``ok`` when every check passes, else 500 naming the failed ones."""
    app = Klein()

    @app.route("/healthz")
    def healthz(request: Any) -> bytes:
        failed = [name for name, check in checks.items() if not check()]
        request.setHeader(b"Content-Type", b"text/plain; charset=utf-8")
        request.setHeader(b"X-Content-Type-Options", b"nosniff")
        if failed:
            request.setResponseCode(500)
            lines = [f"[-]{name} failed: reason withheld" for name in failed]
            return ("\n".join(lines) + "\nhealthz check failed\n").encode()
        return b"ok"

    return app


def listen(reactor: Any, port: int, interface: str, app: Klein) -> Any:
    """Serve ``app`` over TLS; the Deferred fires with the listening port."""
    options = self_signed().options()
    endpoint = SSL4ServerEndpoint(reactor, port, options, interface=interface)
    return endpoint.listen(Site(app.resource()))
