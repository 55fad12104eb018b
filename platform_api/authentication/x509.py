"""Client certificates: CN is the user, each O a group; verified against the client CA.

TLS accepts any client certificate so that a wrong one is a 401 (as in kube) rather
than a failed handshake; the chain is verified here, once per TLS connection.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from cryptography.x509.verification import Criticality, ExtensionPolicy, PolicyBuilder, Store

from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.user import UserInfo

if TYPE_CHECKING:
    from twisted.web.server import Request

_CACHE_ATTR = "_platform_x509_result"
T = TypeVar("T")
_CLIENT_USAGES = (ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE)


def tls_transport(request: Request) -> Any:
    """The TLS transport under a request, for HTTP/1.1 and HTTP/2 alike."""
    channel = request.channel
    conn = getattr(channel, "_conn", None)  # an H2Stream's connection
    transport = (conn or channel).transport
    while transport is not None and not hasattr(transport, "getPeerCertificate"):
        transport = getattr(transport, "transport", None)
    return transport


def peer_chain(transport: Any) -> list[x509.Certificate]:
    """The client's certificate first, then the intermediates it sent."""
    peer = transport.getPeerCertificate() if transport is not None else None
    if peer is None:
        return []
    leaf = peer.to_cryptography()
    chain = [leaf]
    connection = getattr(transport, "_tlsConnection", None)
    for cert in (connection.get_peer_cert_chain() or []) if connection is not None else []:
        parsed = cert.to_cryptography()
        if parsed != leaf:
            chain.append(parsed)
    return chain


def per_connection(transport: Any, attr: str, evaluate: Callable[[Any], T]) -> T:
    """``evaluate(transport)`` once per TLS connection: the peer cannot change on it."""
    cached: T | None = getattr(transport, attr, None)
    if cached is None:
        cached = evaluate(transport)
        setattr(transport, attr, cached)
    return cached


def load_pem_certificates(path: str) -> list[x509.Certificate]:
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificates(f.read())


# As lenient as Go's verifier: a CA only needs basicConstraints; leaves need nothing more.
_CA_POLICY = ExtensionPolicy.permit_all().require_present(
    x509.BasicConstraints, Criticality.AGNOSTIC, None
)
_LEAF_POLICY = ExtensionPolicy.permit_all()


class CertificateVerifier:
    """Verifies client chains against a set of CAs (kube's x509 verify options)."""

    def __init__(self, authorities: list[x509.Certificate]) -> None:
        self._store = Store(authorities)

    def verify(self, chain: list[x509.Certificate]) -> None:
        builder = (
            PolicyBuilder()
            .store(self._store)
            .time(datetime.datetime.now(datetime.UTC))
            .extension_policies(ca_policy=_CA_POLICY, ee_policy=_LEAF_POLICY)
        )
        leaf = chain[0]
        try:
            builder.build_client_verifier().verify(leaf, chain[1:])
        except Exception as e:
            raise AuthenticationError(f"verifying certificate failed: {e}") from None
        try:
            usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except x509.ExtensionNotFound:
            return
        if not any(u in usages for u in _CLIENT_USAGES):
            raise AuthenticationError("certificate specifies an incompatible key usage")


def subject_values(name: x509.Name, oid: x509.ObjectIdentifier) -> list[str]:
    """A subject's values of one attribute (CN, O, ...), in order."""
    return [str(a.value) for a in name.get_attributes_for_oid(oid)]


class X509Authenticator:
    def __init__(self, verifier: CertificateVerifier) -> None:
        self._verifier = verifier

    async def authenticate(self, request: Request) -> AuthResponse | None:
        transport = tls_transport(request)
        if transport is None:
            return None
        response, error, not_after = per_connection(transport, _CACHE_ATTR, self._evaluate)
        if not_after is not None and datetime.datetime.now(datetime.UTC) > not_after:
            raise AuthenticationError("certificate has expired")
        if error is not None:
            raise AuthenticationError(error)
        return response

    def _evaluate(self, transport: Any) -> tuple[AuthResponse | None, str | None, Any]:
        chain = peer_chain(transport)
        if not chain:
            return None, None, None
        leaf = chain[0]
        try:
            self._verifier.verify(chain)
        except AuthenticationError as e:
            return None, str(e), None
        common_names = subject_values(leaf.subject, NameOID.COMMON_NAME)
        if not common_names or not common_names[0]:
            return None, None, leaf.not_valid_after_utc
        user = UserInfo(
            common_names[0], groups=tuple(subject_values(leaf.subject, NameOID.ORGANIZATION_NAME))
        )
        return AuthResponse(user), None, leaf.not_valid_after_utc
