"""CertificateSubjectRestriction: nobody may ask the API server client signer for a
certificate in the ``system:masters`` group (it would bypass every authorizer)."""

from __future__ import annotations

from typing import Any

from cryptography.x509.oid import NameOID

from platform_api import errors
from platform_api.admission.certificates import CSRS, GROUP
from platform_api.admission.chain import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.authentication.user import MASTERS
from platform_api.registry.certificates_validation import parse_request

Obj = dict[str, Any]
KUBE_APISERVER_CLIENT = "platform.io/kube-apiserver-client"


class CertificateSubjectRestriction:
    name = "CertificateSubjectRestriction"

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
        if spec.get("signerName") != KUBE_APISERVER_CLIENT:
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
                f"use of {KUBE_APISERVER_CLIENT} signer with {MASTERS} group is not allowed",
            )


def build(ctx: PluginContext) -> CertificateSubjectRestriction:
    return CertificateSubjectRestriction()
