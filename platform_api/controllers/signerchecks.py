"""What each built-in signer accepts (kube's pkg/apis/certificates helpers and signer checks).

A request a signer does not accept is not signed: the signing controller marks it
``Failed`` with the check's message, in kube's words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from cryptography import x509
from cryptography.x509.oid import NameOID

from platform_api.authentication.x509 import subject_values
from platform_api.controllers.certauthority import common_name
from platform_api.scheme import signers

NODES_GROUP = "system:nodes"
NODE_PREFIX = "system:node:"
KUBELET_CLIENT = frozenset({"digital signature", "key encipherment", "client auth"})
KUBELET_CLIENT_NO_RSA = frozenset({"digital signature", "client auth"})
KUBELET_SERVING = frozenset({"digital signature", "key encipherment", "server auth"})
KUBELET_SERVING_NO_RSA = frozenset({"digital signature", "server auth"})
CLIENT_OPTIONAL = frozenset({"digital signature", "key encipherment"})

Check = Callable[[x509.CertificateSigningRequest, list[str]], str | None]


def _alt_names(request: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _names(request: x509.CertificateSigningRequest, kind: type) -> list[object]:
    alt = _alt_names(request)
    return list(alt.get_values_for_type(kind)) if alt is not None else []


def _go_list(values: Iterable[str]) -> str:
    return "[" + " ".join(sorted(values)) + "]"


def kubelet_client_problem(
    request: x509.CertificateSigningRequest, usages: list[str]
) -> str | None:
    """Why ``request`` is not a kubelet's client certificate request, or None."""
    if subject_values(request.subject, NameOID.ORGANIZATION_NAME) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    for kind, what in (
        (x509.DNSName, "DNS"),
        (x509.RFC822Name, "Email"),
        (x509.IPAddress, "IP"),
        (x509.UniformResourceIdentifier, "URI"),
    ):
        if _names(request, kind):
            return f"{what} subjectAltNames are not allowed"
    if not common_name(request).startswith(NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    if set(usages) not in (KUBELET_CLIENT, KUBELET_CLIENT_NO_RSA):
        return f"usages did not match {_go_list(KUBELET_CLIENT)}"
    return None


def kubelet_serving_problem(
    request: x509.CertificateSigningRequest, usages: list[str]
) -> str | None:
    """Why ``request`` is not a kubelet's serving certificate request, or None."""
    if subject_values(request.subject, NameOID.ORGANIZATION_NAME) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    if not _names(request, x509.DNSName) and not _names(request, x509.IPAddress):
        return "DNS or IP subjectAltName is required"
    if _names(request, x509.RFC822Name):
        return "Email subjectAltNames are not allowed"
    if _names(request, x509.UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if set(usages) not in (KUBELET_SERVING, KUBELET_SERVING_NO_RSA):
        return f"usages did not match {_go_list(KUBELET_SERVING)}"
    if not common_name(request).startswith(NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    return None


def api_client_problem(_request: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    """A client certificate for the API server: ``client auth``, and at most the two
    usages every client certificate may carry besides."""
    for usage in usages:
        if usage != "client auth" and usage not in CLIENT_OPTIONAL:
            return f"invalid usage for client certificate: {usage}"
    if "client auth" not in usages:
        return "missing required usage for client certificate: client auth"
    return None


def anything(_request: x509.CertificateSigningRequest, _usages: list[str]) -> str | None:
    """legacy-unknown signs whatever it is asked, as kube keeps it for compatibility."""
    return None


CHECKS: dict[str, Check] = {
    signers.KUBELET_SERVING: kubelet_serving_problem,
    signers.KUBE_APISERVER_CLIENT_KUBELET: kubelet_client_problem,
    signers.KUBE_APISERVER_CLIENT: api_client_problem,
    signers.LEGACY_UNKNOWN: anything,
}
