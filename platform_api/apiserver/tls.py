"""The serving TLS context: our certificate, ALPN (h2, http/1.1), optional client certificates.

Any client certificate is accepted during the handshake and judged by the x509
authenticator afterwards, so a certificate from an unknown CA is a 401 Status (as kube
answers), not a handshake failure the client cannot explain.  With --tls-sni-cert-key
the handshake's server name picks the certificate (sni.py): each pair has a context of
its own with the same settings, swapped in before the certificate is sent.
"""

from __future__ import annotations

from typing import Any

from cryptography import x509
from OpenSSL import SSL, crypto
from twisted.internet.ssl import AcceptableCiphers, CertificateOptions, TLSVersion
from twisted.logger import Logger

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.sni import NameMap, Pair
from platform_api.apiserver.tlsflags import VERSIONS, openssl_cipher_string, set_groups
from platform_api.authentication.x509 import load_pem_certificates
from platform_api.pem import certificate_options

log = Logger()


def _accept_any(conn: SSL.Connection, cert: Any, errno: int, depth: int, ok: int) -> bool:
    return True


class ServingOptions(CertificateOptions):
    """CertificateOptions that request (but do not require) a client certificate."""

    def __init__(
        self, client_cas: list[x509.Certificate], curves: tuple[int, ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._client_cas = client_cas
        self._curves = curves
        self.sni: NameMap[ServingOptions] | None = None

    def _makeContext(self, skipCiphers: bool = False) -> SSL.Context:
        ctx = super()._makeContext(skipCiphers)
        # Idle connections (watches) give their read/write buffers back: ~34 KiB each.
        ctx.set_mode(SSL.MODE_RELEASE_BUFFERS)
        if self._client_cas:
            ctx.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_CLIENT_ONCE, _accept_any)
            ctx.set_client_ca_list(
                [crypto.X509.from_cryptography(ca).get_subject() for ca in self._client_cas]
            )
        if self._curves:
            set_groups(ctx, self._curves)
        if self.sni is not None:
            ctx.set_tlsext_servername_callback(self._choose_certificate)
        return ctx

    def _choose_certificate(self, conn: SSL.Connection) -> None:
        """OpenSSL's servername callback (also called for a hello without SNI)."""
        assert self.sni is not None
        try:
            name = conn.get_servername()
            if name:
                chosen = self.sni.for_server_name(name.decode("ascii", "replace"))
            else:
                chosen = self.sni.for_address(conn.get_app_data().transport.getHost().host)
            if chosen is not None:
                conn.set_context(chosen.getContext())
        except Exception:  # as Twisted's own SNI callback: end this handshake only
            log.failure("while choosing the certificate for a TLS handshake")
            conn.get_app_data().abortConnection()


def serving_options_for(
    cfg: ServerConfig, cert_file: str, key_file: str, client_ca_file: str
) -> ServingOptions:
    """The serving context the configuration asks for: its certificate, client CAs,
    TLS versions, suites and curves, and the --tls-sni-cert-key pairs."""
    cas = load_pem_certificates(client_ca_file) if client_ca_file else []
    return serving_options(
        cert_file,
        key_file,
        cas,
        cfg.tls_min_version,
        cfg.tls_cipher_suites,
        sni=cfg.tls_sni_pairs,
        curves=cfg.tls_curve_preferences,
    )


def serving_options(
    cert_file: str,
    key_file: str,
    client_cas: list[x509.Certificate],
    min_version: str = "",
    cipher_suites: tuple[str, ...] = (),
    sni: tuple[Pair, ...] = (),
    curves: tuple[int, ...] = (),
) -> ServingOptions:
    """``min_version``, ``cipher_suites`` and ``curves``: --tls-min-version,
    --tls-cipher-suites and --tls-curve-preferences, Go's names (tlsflags.py); ``sni``:
    the --tls-sni-cert-key pairs (sni.load)."""
    with open(cert_file, "rb") as f:
        cert_pem = f.read()
    with open(key_file, "rb") as f:
        key_pem = f.read()
    tuning = _tuning(min_version, cipher_suites)

    def options(key: bytes, cert: bytes) -> ServingOptions:
        return ServingOptions(
            client_cas, curves, **certificate_options(key, cert), enableSessions=False, **tuning
        )

    default = options(key_pem, cert_pem)
    if sni:
        default.sni = NameMap(sni, lambda pair: options(pair.key_pem, pair.cert_pem))
    return default


def _tuning(min_version: str, cipher_suites: tuple[str, ...]) -> dict[str, Any]:
    tuning: dict[str, Any] = {}
    version = getattr(TLSVersion, VERSIONS[min_version or "VersionTLS12"])
    if version < TLSVersion.TLSv1_2:
        tuning["insecurelyLowerMinimumTo"] = version
    else:
        tuning["raiseMinimumTo"] = version
    ciphers = openssl_cipher_string(cipher_suites)
    if ciphers:
        tuning["acceptableCiphers"] = AcceptableCiphers.fromOpenSSLCipherString(ciphers)
    return tuning
