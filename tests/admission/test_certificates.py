"""The certificate plugins: approve, sign and attest checks against the ``signers``
resource (by name, then ``<domain>/*``), and the system:masters restriction, with
kube's messages (taken from a kube-apiserver v1.36)."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred

from platform_api.admission.certificates.approval import CertificateApproval
from platform_api.admission.certificates.ctbattest import (
    ClusterTrustBundleAttest,
    only_gc_fields_changed,
)
from platform_api.admission.certificates.signing import CertificateSigning
from platform_api.admission.certificates.subjectrestriction import CertificateSubjectRestriction
from platform_api.admission.interface import Attributes
from platform_api.authentication.user import UserInfo
from platform_api.cel.library.authz import CheckAttributes
from platform_api.errors import StatusError
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import ResourceType
from tests.registry.test_certificates import pem_request

Obj = dict[str, Any]
CSRS = builtin_scheme().lookup("certificates.platform.io", "v1", "certificatesigningrequests")
USER = UserInfo("carol", groups=("system:authenticated",))


class Allow:
    """An authorizer allowing the given (verb, signer name) pairs; records the checks."""

    def __init__(self, *allowed: tuple[str, str]) -> None:
        self.allowed = set(allowed)
        self.checks: list[CheckAttributes] = []

    async def __call__(self, check: CheckAttributes) -> tuple[str, str]:
        self.checks.append(check)
        return ("allow" if (check.verb, check.name) in self.allowed else "no-opinion"), ""


def attrs(sub: str, op: str = "UPDATE", rt: ResourceType | None = CSRS) -> Attributes:
    assert rt is not None
    return Attributes(op, rt, sub, "", "c", USER, False)


def csr(signer: str = "example.com/foo", **status: Any) -> Obj:
    return {"metadata": {"name": "c"}, "spec": {"signerName": signer}, "status": status}


def message(call: Any) -> str:
    failures: list[Any] = []
    ensureDeferred(call).addErrback(failures.append)
    assert failures, "not refused"
    error = failures[0].value
    assert isinstance(error, StatusError) and error.code == 403
    return str(error.message)


def passes(call: Any) -> None:
    failures: list[Any] = []
    ensureDeferred(call).addErrback(failures.append)
    assert not failures, failures[0].value


def test_approval_needs_approve_for_the_stored_signer() -> None:
    authz = Allow()
    plugin = CertificateApproval(authz)
    new, old = csr("example.com/other"), csr()
    assert message(plugin.validate(attrs("approval"), new, old)) == (
        'certificatesigningrequests.certificates.platform.io "c" is forbidden: user not '
        'permitted to approve requests with signerName "example.com/foo"'
    )
    assert [(c.verb, c.name, c.resource, c.api_group) for c in authz.checks] == [
        ("approve", "example.com/foo", "signers", "certificates.platform.io"),
        ("approve", "example.com/*", "signers", "certificates.platform.io"),
    ]
    passes(
        CertificateApproval(Allow(("approve", "example.com/*"))).validate(
            attrs("approval"), new, old
        )
    )
    passes(plugin.validate(attrs(""), new, old))
    passes(plugin.validate(attrs("status"), new, old))


def test_signing_needs_sign_when_certificate_or_conditions_change() -> None:
    plugin = CertificateSigning(Allow())
    old = csr()
    assert message(plugin.validate(attrs("status"), csr(certificate="eA=="), old)) == (
        'certificatesigningrequests.certificates.platform.io "c" is forbidden: user not '
        'permitted to sign requests with signerName "example.com/foo"'
    )
    failed = csr(conditions=[{"type": "Failed", "status": "True"}])
    assert "not permitted to sign" in message(plugin.validate(attrs("status"), failed, old))
    labelled = csr()
    labelled["metadata"]["labels"] = {"a": "b"}
    passes(plugin.validate(attrs("status"), labelled, old))
    allowed = CertificateSigning(Allow(("sign", "example.com/foo")))
    passes(allowed.validate(attrs("status"), csr(certificate="eA=="), old))


def test_subject_restriction() -> None:
    plugin = CertificateSubjectRestriction()
    masters = csr("platform.io/kube-apiserver-client")
    masters["spec"]["request"] = pem_request("x", ("system:masters",))
    with pytest.raises(StatusError) as e:
        plugin.validate(attrs("", "CREATE"), masters, None)
    assert e.value.message == (
        'certificatesigningrequests.certificates.platform.io "c" is forbidden: use of '
        "platform.io/kube-apiserver-client signer with system:masters group is not allowed"
    )
    other = csr()
    other["spec"]["request"] = masters["spec"]["request"]
    plugin.validate(attrs("", "CREATE"), other, None)
    fine = csr("platform.io/kube-apiserver-client")
    fine["spec"]["request"] = pem_request("x", ("dev",))
    plugin.validate(attrs("", "CREATE"), fine, None)


def test_cluster_trust_bundle_attest_is_inert_until_served() -> None:
    bundles = ResourceType(
        "certificates.platform.io",
        "v1beta1",
        "ClusterTrustBundle",
        "clustertrustbundles",
        "clustertrustbundle",
        False,
    )
    bundle = {"metadata": {"name": "b"}, "spec": {"signerName": "example.com/foo"}}
    inert = ClusterTrustBundleAttest(Allow(), enabled=False)
    passes(inert.validate(attrs("", "CREATE", bundles), bundle, None))
    live = ClusterTrustBundleAttest(Allow(), enabled=True)
    assert message(live.validate(attrs("", "CREATE", bundles), bundle, None)).endswith(
        'is forbidden: user not permitted to attest for signerName "example.com/foo"'
    )
    moved = {**bundle, "metadata": {"name": "b", "finalizers": ["x"]}}
    assert only_gc_fields_changed(moved, bundle)
    passes(live.validate(attrs("", "UPDATE", bundles), moved, bundle))
