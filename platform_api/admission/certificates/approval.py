"""CertificateApproval: approving or denying a CSR (its ``/approval``) needs ``approve``
for the request's signer.  The stored request decides the signer, so an approval that
also tries to change it is checked against the one it has."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.certificates import CSRS, GROUP, authorized_for_signer, is_csr_update
from platform_api.admission.interface import Attributes
from platform_api.admission.matching import Authorize
from platform_api.admission.plugins import PluginContext

Obj = dict[str, Any]


class CertificateApproval:
    name = "CertificateApproval"
    resources = frozenset({(GROUP, CSRS)})

    def __init__(self, authorize: Authorize) -> None:
        self._authorize = authorize

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not is_csr_update(attrs, "approval") or old is None:
            return
        signer = (old.get("spec") or {}).get("signerName") or ""
        if not await authorized_for_signer(self._authorize, attrs.user, "approve", signer):
            raise errors.forbidden(
                CSRS,
                GROUP,
                attrs.name,
                f'user not permitted to approve requests with signerName "{signer}"',
            )


def build(ctx: PluginContext) -> CertificateApproval:
    return CertificateApproval(ctx.authorize)
