"""certificatesigningrequest-approving-controller over real storage and the RBAC authorizer,
asked through the server's own SubjectAccessReview path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.apiserver.controllers import access_review
from platform_api.authentication.user import UserInfo
from platform_api.authorization.rbac.bootstrap_components import certificate_roles
from platform_api.controllers.csrapproving import CSRApprover
from platform_api.registry.requester import REQUESTER
from platform_api.scheme import signers
from tests.authorization.test_rbac_authorizer import Cluster, binding
from tests.controllers.test_csrsigning import CSRS, csr, pem_request

Obj = dict[str, Any]
NODE_USAGES = ["client auth", "digital signature", "key encipherment"]
PREFIX = "system:certificates.platform.io:certificatesigningrequests:"
BOOTSTRAPPERS = "system:bootstrappers"


def group(name: str) -> Obj:
    return {"kind": "Group", "name": name, "apiGroup": "rbac.authorization.platform.io"}


class Setup:
    def __init__(self, tmp_path: Path, upstream: bool = False) -> None:
        self.cluster = Cluster(str(tmp_path))
        self.cluster.index.start()
        for role in certificate_roles():
            self.cluster.put("clusterroles", role)
        self.store = self.cluster.stores[CSRS]
        review = access_review(self.cluster.rbac)
        self.approver = CSRApprover(
            self.store, review, self.cluster.hub, self.cluster.clock, upstream=upstream
        )
        self.approver.start()

    def bind(self, role: str, subject: Obj) -> None:
        self.cluster.put(
            "clusterrolebindings", binding(role, "ClusterRole", PREFIX + role, subject)
        )
        self.cluster.clock.advance(1000)  # past any backoff: the next look sees the binding
        self.cluster.settle()

    def create(
        self,
        name: str,
        cn: str,
        requester: UserInfo,
        signer: str = signers.KUBE_APISERVER_CLIENT_KUBELET,
        usages: list[str] = NODE_USAGES,
    ) -> None:
        obj = csr(name, signer, usages, request=pem_request(cn, ("system:nodes",)))
        token = REQUESTER.set(requester)  # the strategy records the creator, as kube's does
        try:
            self.cluster.run(self.store.create("", obj))
        finally:
            REQUESTER.reset(token)
        self.cluster.settle()

    def conditions(self, name: str) -> list[Obj]:
        return (self.store.get("", name).object.get("status") or {}).get("conditions") or []


def bootstrap_token() -> UserInfo:
    return UserInfo("system:bootstrap:abcdef", "", (BOOTSTRAPPERS, "system:authenticated"), {})


def node(name: str) -> UserInfo:
    return UserInfo(f"system:node:{name}", "", ("system:nodes", "system:authenticated"), {})


def test_a_bootstrap_token_may_get_a_new_node_approved(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.create("boot", "system:node:n1", bootstrap_token())
    assert s.conditions("boot") == []  # nobody may yet
    s.bind("nodeclient", group(BOOTSTRAPPERS))
    (condition,) = s.conditions("boot")
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "Approved",
        "status": "True",
        "reason": "AutoApproved",
        "message": "Auto approving kubelet client certificate after SubjectAccessReview.",
    }


def test_a_node_renews_its_own_certificate(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.bind("selfnodeclient", group("system:nodes"))
    s.create("renew", "system:node:n1", node("n1"))
    s.create("other", "system:node:n2", node("n1"))  # another node's name: not its own
    assert s.conditions("renew")[0]["message"] == (
        "Auto approving self kubelet client certificate after SubjectAccessReview."
    )
    assert s.conditions("other") == []


@pytest.mark.parametrize(
    "signer, usages",
    [
        (signers.KUBE_APISERVER_CLIENT, ["client auth"]),  # not the kubelet signer
        (signers.KUBE_APISERVER_CLIENT_KUBELET, ["client auth", "server auth"]),  # not a kubelet's
    ],
)
def test_nothing_else_is_approved(tmp_path: Path, signer: str, usages: list[str]) -> None:
    s = Setup(tmp_path)
    s.bind("nodeclient", group(BOOTSTRAPPERS))
    s.create("c", "system:node:n1", bootstrap_token(), signer, usages)
    assert s.conditions("c") == []


@pytest.mark.parametrize("upstream", [True, False])
def test_kubes_signer_name_only_with_upstream_names(tmp_path: Path, upstream: bool) -> None:
    s = Setup(tmp_path, upstream=upstream)
    s.bind("nodeclient", group(BOOTSTRAPPERS))
    s.create(
        "c", "system:node:n1", bootstrap_token(), "kubernetes.io/kube-apiserver-client-kubelet"
    )
    assert bool(s.conditions("c")) is upstream
