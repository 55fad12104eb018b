"""kube's certificatesigningrequest-approving-controller: nodes' client certificates.

A pending request for ``platform.io/kube-apiserver-client-kubelet`` that looks like a
kubelet's client certificate (``system:nodes``, ``system:node:<name>``, no alternative
names, kube's usages) is approved when its requester may ``create`` the
``certificatesigningrequests/selfnodeclient`` subresource (a node renewing its own
certificate: the requester is the subject) or ``.../nodeclient`` (a bootstrap token asking
for a new node), as a SubjectAccessReview answers.  Nothing else is approved here; a
request the review refuses is looked at again with a growing delay, as kube retries it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from platform_api import errors
from platform_api.controllers.certauthority import common_name
from platform_api.controllers.csrbase import (
    CSRS,
    GROUP,
    CertificateController,
    condition_true,
    issued,
)
from platform_api.controllers.signerchecks import kubelet_client_problem
from platform_api.registry.certificates_validation import parse_request
from platform_api.registry.store import Store
from platform_api.scheme import signers

Obj = dict[str, Any]
Review = Callable[[Obj], Awaitable[bool]]  # a SubjectAccessReview spec -> allowed
SELF = (
    "selfnodeclient",
    "Auto approving self kubelet client certificate after SubjectAccessReview.",
)
ANY = ("nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview.")


def decided(csr: Obj) -> bool:
    return condition_true(csr, "Approved") or condition_true(csr, "Denied")


class CSRApprover(CertificateController):
    """Keys are CertificateSigningRequest names."""

    name = "certificatesigningrequest-approving-controller"

    def __init__(self, csrs: Store, review: Review, *args: Any, upstream: bool = False) -> None:
        super().__init__(csrs, *args, upstream=upstream)
        self.review = review

    def wanted(self, csr: Obj) -> bool:
        return not issued(csr) and not decided(csr)

    async def sync(self, name: str) -> float | None:
        csr = self.current(name)
        if csr is None:
            return None
        recognized = self._recognized(csr)
        for subresource, message in recognized:
            if await self.review(self._review_spec(csr, subresource)):
                self.done(name)
                write = self.write_if_unchanged(csr, _approval(message))
                await errors.tolerating(
                    self.csrs.update("", name, write, subresource="approval"), 404, 409
                )
                return None
        return self.retry(name) if recognized else None

    def _recognized(self, csr: Obj) -> list[tuple[str, str]]:
        """kube's recognizers, in its order: the node itself first, then any requester."""
        spec = csr.get("spec") or {}
        if self.signer(csr) != signers.KUBE_APISERVER_CLIENT_KUBELET:
            return []
        try:
            request = parse_request(spec.get("request"))
        except ValueError:
            return []
        if kubelet_client_problem(request, [str(u) for u in spec.get("usages") or []]):
            return []
        own = spec.get("username") == common_name(request)
        return [SELF, ANY] if own else [ANY]

    @staticmethod
    def _review_spec(csr: Obj, subresource: str) -> Obj:
        spec = csr.get("spec") or {}
        return {
            "user": spec.get("username") or "",
            "uid": spec.get("uid") or "",
            "groups": list(spec.get("groups") or []),
            "extra": dict(spec.get("extra") or {}),
            "resourceAttributes": {
                "group": GROUP,
                "version": "*",
                "resource": CSRS,
                "subresource": subresource,
                "verb": "create",
            },
        }


def _approval(message: str) -> Callable[[Obj], None]:
    condition = {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": message}
    return lambda status: status.update(conditions=[*(status.get("conditions") or []), condition])
