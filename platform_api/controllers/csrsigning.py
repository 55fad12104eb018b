"""kube's certificatesigningrequest-signing-controller: approved requests get certificates.

For each built-in signer with a CA (signingoptions.py), an approved request that is not
denied, failed or already issued is checked against what that signer accepts
(signerchecks.py) and then signed: its certificate goes in ``status.certificate``.  A
request the signer refuses is marked ``Failed`` (reason ``SignerValidationFailure``) and
never signed; custom signers' requests are left to their own controllers.  The lifetime
is ``--cluster-signing-duration``, or the request's ``spec.expirationSeconds`` when that
is shorter (never under ten minutes).
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.controllers.certauthority import CAFiles, SigningError
from platform_api.controllers.csrbase import CertificateController, approved, condition_true, issued
from platform_api.controllers.signerchecks import CHECKS
from platform_api.controllers.signingoptions import SigningOptions
from platform_api.registry.certificates_validation import parse_request
from platform_api.registry.store import Store

log = Logger()
Obj = dict[str, Any]
MIN_DURATION = 600.0  # twice the backdate: a shorter certificate would start expired


class CSRSigner(CertificateController):
    """Keys are CertificateSigningRequest names."""

    name = "certificatesigningrequest-signing-controller"

    def __init__(
        self, csrs: Store, options: SigningOptions, *args: Any, upstream: bool = False
    ) -> None:
        super().__init__(csrs, *args, upstream=upstream)
        self.duration = options.duration
        self.authorities = {
            signer: CAFiles(cert, key) for signer, (cert, key) in options.files.items()
        }

    def wanted(self, csr: Obj) -> bool:
        if issued(csr) or not approved(csr) or condition_true(csr, "Failed"):
            return False
        return self.signer(csr) in self.authorities

    async def sync(self, name: str) -> float | None:
        csr = self.current(name)
        if csr is None:
            return None
        try:
            change = self._change_for(csr)
        except (SigningError, ValueError) as e:  # kube logs, and retries with a backoff
            log.warn("error auto signing csr {name}: {e}", name=name, e=e)
            return self.retry(name)
        self.done(name)
        write = self.write_if_unchanged(csr, change)
        await errors.tolerating(self.csrs.update("", name, write, subresource="status"), 404, 409)
        return None

    def _change_for(self, csr: Obj) -> Any:
        """What the status gets: the certificate, or a Failed condition if the signer
        does not accept the request."""
        spec = csr.get("spec") or {}
        request = parse_request(spec.get("request"))
        usages = [str(u) for u in spec.get("usages") or []]
        signer = self.signer(csr)
        now = datetime.datetime.fromtimestamp(self.reactor.seconds(), datetime.UTC)
        problem = CHECKS[signer](request, usages)
        if problem is not None:
            condition = _failed(problem, now)
            return lambda status: status.update(
                conditions=[*(status.get("conditions") or []), condition]
            )
        ttl = datetime.timedelta(seconds=self._lifetime(spec.get("expirationSeconds")))
        pem = self.authorities[signer].current().sign(request, usages, ttl, now)
        certificate = base64.b64encode(pem).decode()
        return lambda status: status.update(certificate=certificate)

    def _lifetime(self, requested: Any) -> float:
        if requested is None:
            return self.duration
        return max(MIN_DURATION, min(float(requested), self.duration))


def _failed(message: str, now: datetime.datetime) -> Obj:
    """kube's condition; the CSR status strategy fills ``lastTransitionTime``."""
    return {
        "type": "Failed",
        "status": "True",
        "reason": "SignerValidationFailure",
        "message": message,
        "lastUpdateTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
