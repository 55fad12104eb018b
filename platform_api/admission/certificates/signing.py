"""CertificateSigning: a ``/status`` write that changes a CSR's certificate or its
conditions needs ``sign`` for the request's (stored) signer; one that changes neither
(labels, say) needs nothing more."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.certificates import CSRS, GROUP, authorized_for_signer, is_csr_update
from platform_api.admission.interface import Attributes
from platform_api.admission.matching import Authorize
from platform_api.admission.plugins import PluginContext

Obj = dict[str, Any]


def _signed_part(csr: Obj) -> tuple[Any, Any]:
    status = csr.get("status") or {}
    return status.get("certificate") or "", status.get("conditions") or []


class CertificateSigning:
    name = "CertificateSigning"
    resources = frozenset({(GROUP, CSRS)})

    def __init__(self, authorize: Authorize) -> None:
        self._authorize = authorize

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not is_csr_update(attrs, "status") or obj is None or old is None:
            return
        if _signed_part(obj) == _signed_part(old):
            return
        signer = (old.get("spec") or {}).get("signerName") or ""
        if not await authorized_for_signer(self._authorize, attrs.user, "sign", signer):
            raise errors.forbidden(
                CSRS,
                GROUP,
                attrs.name,
                f'user not permitted to sign requests with signerName "{signer}"',
            )


def build(ctx: PluginContext) -> CertificateSigning:
    return CertificateSigning(ctx.authorize)
