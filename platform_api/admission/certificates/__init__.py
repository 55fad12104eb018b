"""The certificate admission plugins (kube's plugin/pkg/admission/certificates).

Permission to act for a signer is an authorization of the synthetic ``signers``
resource: verb ``approve``, ``sign`` or ``attest`` on the signer's name, or on
``<domain>/*`` for every signer of a domain (kube's certauthorization).
"""

from __future__ import annotations

from platform_api.admission.interface import Attributes
from platform_api.admission.matching import Authorize
from platform_api.authentication.user import UserInfo
from platform_api.cel.library.authz import CheckAttributes

GROUP = "certificates.platform.io"
CSRS = "certificatesigningrequests"


def is_csr_update(attrs: Attributes, subresource: str) -> bool:
    """Whether the request updates a CertificateSigningRequest's ``subresource``."""
    rt = attrs.resource
    return (
        attrs.operation == "UPDATE"
        and attrs.subresource == subresource
        and (rt.group, rt.plural) == (GROUP, CSRS)
    )


def _check(user: UserInfo, verb: str, name: str) -> CheckAttributes:
    who = {
        "username": user.name,
        "uid": user.uid,
        "groups": list(user.groups),
        "extra": {k: list(v) for k, v in user.extra.items()},
    }
    return CheckAttributes(
        who, verb, True, api_group=GROUP, api_version="*", resource="signers", name=name
    )


async def authorized_for_signer(
    authorize: Authorize, user: UserInfo, verb: str, signer: str
) -> bool:
    """Whether ``user`` may ``verb`` for ``signer``: by name, else by its domain's ``/*``."""
    for name in (signer, signer.split("/", 1)[0] + "/*"):
        try:
            decision, _ = await authorize(_check(user, verb, name))
        except Exception:  # an authorizer error denies, as kube's does (it only logs)
            continue
        if decision == "allow":
            return True
    return False
