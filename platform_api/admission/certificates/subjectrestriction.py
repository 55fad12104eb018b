"""CertificateSubjectRestriction: nobody may ask the API server client signer for a
certificate in the ``system:masters`` group (it would bypass every authorizer).  With
upstream names served, kube's name for that signer is the same signer (scheme/signers.py)."""

from __future__ import annotations

from typing import Any

from cryptography.x509.oid import NameOID

from platform_api import errors
from platform_api.admission.certificates import CSRS, GROUP
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.authentication.user import MASTERS
from platform_api.registry.certificates_validation import parse_request
from platform_api.scheme import signers

Obj = dict[str, Any]


class CertificateSubjectRestriction:
    name = "CertificateSubjectRestriction"
    resources = frozenset({(GROUP, CSRS)})

    def __init__(self, upstream: bool = False) -> None:
        self.upstream = upstream

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if (
            attrs.operation != "CREATE"
            or attrs.subresource
            or (rt.group, rt.plural) != (GROUP, CSRS)
            or obj is None
        ):
            return
        spec = obj.get("spec") or {}
        signer = spec.get("signerName") or ""
        if signers.canonical(signer, self.upstream) != signers.KUBE_APISERVER_CLIENT:
            return
        try:
            request = parse_request(spec.get("request"))
        except ValueError as e:
            raise errors.forbidden(CSRS, GROUP, attrs.name, f"failed to parse CSR: {e}") from None
        organizations = request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        if any(o.value == MASTERS for o in organizations):
            raise errors.forbidden(
                CSRS,
                GROUP,
                attrs.name,
                f"use of {signer} signer with {MASTERS} group is not allowed",
            )


def build(ctx: PluginContext) -> CertificateSubjectRestriction:
    return CertificateSubjectRestriction(ctx.config.serve_upstream_groups)
