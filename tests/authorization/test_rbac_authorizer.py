"""The RBAC authorizer over its in-memory index, fed by real storage through the hub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.rbac.authorizer import RBACAuthorizer
from platform_api.authorization.rbac.index import GROUP, RuleIndex, prefix_of
from tests.authorization import rbac_cluster

Obj = dict[str, Any]


class Cluster(rbac_cluster.Cluster):
    """The shared RBAC test cluster, with a rule index and the authorizer over it."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.index = RuleIndex(self.storage, self.hub)
        self.rbac = RBACAuthorizer(self.index)

    def put(self, plural: str, obj: Obj) -> None:
        meta = obj["metadata"]
        key = (
            prefix_of(plural)
            + (
                f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
            ).encode()
        )
        self.run(
            self.storage.guaranteed_update(key, lambda _o, _s: dict(obj), ignore_not_found=True)
        )
        self.hub.flush()

    def delete(self, plural: str, name: str) -> None:
        self.run(self.storage.delete(prefix_of(plural) + name.encode()))
        self.hub.flush()

    def decide(self, user: UserInfo, **kw: Any) -> tuple[Decision, str]:
        return self.rbac.decide(Attributes(user=user, resource_request="path" not in kw, **kw))


def role(name: str, *rules: Obj, namespace: str = "") -> Obj:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"metadata": meta, "rules": list(rules)}


def binding(name: str, ref_kind: str, ref: str, *subjects: Obj, namespace: str = "") -> Obj:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "metadata": meta,
        "roleRef": {"apiGroup": GROUP, "kind": ref_kind, "name": ref},
        "subjects": list(subjects),
    }


def user(name: str) -> Obj:
    return {"kind": "User", "apiGroup": GROUP, "name": name}


def group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": GROUP, "name": name}


READ_CM = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
CAROL = UserInfo("carol", groups=("system:authenticated",))


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(str(tmp_path / "db"))
    c.index.start()
    yield c
    c.index.stop()


def test_cluster_binding_grants_everywhere(cluster: Cluster) -> None:
    assert cluster.decide(CAROL, verb="get", resource="configmaps", namespace="a") == (
        Decision.NO_OPINION,
        "",
    )
    cluster.put("clusterroles", role("read-cm", READ_CM))
    cluster.put(
        "clusterrolebindings", binding("carol-reads", "ClusterRole", "read-cm", user("carol"))
    )
    assert cluster.decide(CAROL, verb="list", resource="configmaps", namespace="a") == (
        Decision.ALLOW,
        'RBAC: allowed by ClusterRoleBinding "carol-reads" of ClusterRole "read-cm" to User "carol"',
    )
    assert cluster.decide(CAROL, verb="delete", resource="configmaps", namespace="a")[0] is (
        Decision.NO_OPINION
    )


def test_role_binding_grants_only_in_its_namespace(cluster: Cluster) -> None:
    cluster.put("clusterroles", role("read-cm", READ_CM))
    cluster.put(
        "rolebindings",
        binding("r", "ClusterRole", "read-cm", group("system:authenticated"), namespace="a"),
    )
    allowed = cluster.decide(CAROL, verb="get", resource="configmaps", namespace="a")
    assert allowed == (
        Decision.ALLOW,
        'RBAC: allowed by RoleBinding "r/a" of ClusterRole "read-cm" to Group "system:authenticated"',
    )
    assert cluster.decide(CAROL, verb="get", resource="configmaps", namespace="b")[0] is (
        Decision.NO_OPINION
    )
    assert cluster.decide(CAROL, verb="list", resource="configmaps")[0] is Decision.NO_OPINION


def test_namespaced_role_and_service_account_subject(cluster: Cluster) -> None:
    cluster.put("roles", role("reader", READ_CM, namespace="a"))
    sa = {"kind": "ServiceAccount", "name": "bot"}  # namespace defaults to the binding's
    cluster.put("rolebindings", binding("b", "Role", "reader", sa, namespace="a"))
    bot = UserInfo("system:serviceaccount:a:bot", groups=("system:serviceaccounts",))
    decision, reason = cluster.decide(bot, verb="get", resource="configmaps", namespace="a")
    assert decision is Decision.ALLOW
    assert reason.endswith('to ServiceAccount "bot/a"')
    other = UserInfo("system:serviceaccount:b:bot")
    assert cluster.decide(other, verb="get", resource="configmaps", namespace="a")[0] is (
        Decision.NO_OPINION
    )


def test_missing_role_is_a_reason_and_changes_apply_at_once(cluster: Cluster) -> None:
    cluster.put("clusterrolebindings", binding("x", "ClusterRole", "later", user("carol")))
    assert cluster.decide(CAROL, verb="get", resource="configmaps") == (
        Decision.NO_OPINION,
        f'RBAC: clusterrole.{GROUP} "later" not found',
    )
    cluster.put("clusterroles", role("later", READ_CM))
    assert cluster.decide(CAROL, verb="get", resource="configmaps")[0] is Decision.ALLOW
    cluster.put("clusterroles", role("later", {**READ_CM, "verbs": ["watch"]}))
    assert cluster.decide(CAROL, verb="get", resource="configmaps")[0] is Decision.NO_OPINION
    cluster.put("clusterroles", role("later", READ_CM))
    cluster.delete("clusterrolebindings", "x")
    assert cluster.decide(CAROL, verb="get", resource="configmaps") == (Decision.NO_OPINION, "")


def test_subject_change_moves_the_grant(cluster: Cluster) -> None:
    cluster.put("clusterroles", role("probe", {"nonResourceURLs": ["/healthz*"], "verbs": ["get"]}))
    cluster.put("clusterrolebindings", binding("p", "ClusterRole", "probe", user("carol")))
    assert cluster.decide(CAROL, verb="get", path="/healthz/ping")[0] is Decision.ALLOW
    cluster.put("clusterrolebindings", binding("p", "ClusterRole", "probe", user("dave")))
    assert cluster.decide(CAROL, verb="get", path="/healthz/ping")[0] is Decision.NO_OPINION
    dave = UserInfo("dave")
    assert cluster.decide(dave, verb="get", path="/healthz")[0] is Decision.ALLOW
    assert cluster.decide(dave, verb="post", path="/healthz")[0] is Decision.NO_OPINION


def test_index_lists_existing_objects_at_start(tmp_path: Path) -> None:
    first = Cluster(str(tmp_path / "db"))
    first.put("clusterroles", role("read-cm", READ_CM))
    first.put("clusterrolebindings", binding("b", "ClusterRole", "read-cm", user("carol")))
    first.storage._env.close()
    second = Cluster(str(tmp_path / "db"))
    second.index.start()
    assert second.decide(CAROL, verb="get", resource="configmaps")[0] is Decision.ALLOW
