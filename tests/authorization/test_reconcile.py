"""Start-up reconciliation of the defaults, against real storage."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import Deferred, ensureDeferred

from platform_api.authorization.rbac.bootstrap import AUTOUPDATE
from platform_api.authorization.rbac.reconcile import (
    Reconciler,
    Report,
    default_policy,
    reconciled_binding,
    reconciled_role,
)
from tests.authorization.rbac_cluster import RBAC, Cluster, Obj

SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    yield Cluster(str(tmp_path / "db"))


def reconcile(cluster: Cluster, objs: list[Obj] | None = None) -> Report:
    report: Report = cluster.run(Reconciler(cluster.stores).run(objs))
    assert not report.failed
    return report


def role(name: str, *rules: Obj, **meta: object) -> Obj:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, **meta},
        "rules": list(rules),
    }


def binding(name: str, *subjects: Obj, role_name: str = "") -> Obj:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role_name or name},
        "subjects": list(subjects),
    }


def group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def test_creates_every_default_then_writes_nothing(cluster: Cluster) -> None:
    report = reconcile(cluster)
    assert len(report.created) == len(default_policy())
    assert cluster.storage.current_revision() == len(default_policy())
    view = cluster.get("clusterroles", "view")
    assert view["metadata"]["annotations"][AUTOUPDATE] == "true"
    roles = cluster.names("roles")
    assert "extension-apiserver-authentication-reader" in roles
    before = cluster.storage.current_revision()
    again = reconcile(cluster)
    assert again.writes == 0 and not again.protected
    assert cluster.storage.current_revision() == before


def test_creates_are_issued_together_so_storage_batches_them(tmp_path: Path) -> None:
    queued: list[tuple[Callable[[], Any], Deferred[Any]]] = []

    def writer(work: Callable[[], Any]) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        queued.append((work, d))
        return d

    cluster = Cluster(str(tmp_path / "db"), writer)  # holds the writes to count the batches
    done = ensureDeferred(Reconciler(cluster.stores).run())
    batches = 0
    while queued:
        work, d = queued.pop(0)
        batches += 1
        d.callback(work())
    assert done.called and batches <= 2  # the first write, then everything queued behind it
    assert cluster.storage.current_revision() == len(default_policy())


def test_recreates_a_deleted_default(cluster: Cluster) -> None:
    reconcile(cluster)
    cluster.run(cluster.rbac("clusterroles").delete("", "system:basic-user"))
    report = reconcile(cluster)
    assert report.created == ["ClusterRole/system:basic-user"]
    assert report.updated == []


def test_adds_missing_rules_and_keeps_extra_ones(cluster: Cluster) -> None:
    cluster.run(cluster.rbac("clusterroles").create("", role("r", SECRETS)))
    report = reconcile(cluster, [role("r", PODS, labels={"a": "1"})])
    assert report.updated == ["ClusterRole/r"]
    stored = cluster.get("clusterroles", "r")
    assert stored["rules"][0] == SECRETS
    # kube appends what is missing, one rule per group, resource and verb.
    assert stored["rules"][1:] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]
    assert stored["metadata"]["labels"] == {"a": "1"}
    assert reconcile(cluster, [role("r", PODS, labels={"a": "1"})]).writes == 0


def test_stored_labels_win_and_missing_ones_are_added() -> None:
    existing = role("r", PODS, labels={"a": "mine"}, annotations={AUTOUPDATE: "true"})
    expected = role("r", PODS, labels={"a": "default", "b": "2"})
    result = reconciled_role(existing, expected)
    assert result is not None
    assert result["metadata"]["labels"] == {"a": "mine", "b": "2"}


def test_adds_missing_aggregation_selectors() -> None:
    selector = {"matchLabels": {"x": "true"}}
    other = {"matchLabels": {"y": "true"}}
    existing = role("agg", aggregationRule=None)
    existing["aggregationRule"] = {"clusterRoleSelectors": [other]}
    expected = role("agg")
    expected["aggregationRule"] = {"clusterRoleSelectors": [selector]}
    result = reconciled_role(existing, expected)
    assert result is not None
    assert result["aggregationRule"]["clusterRoleSelectors"] == [other, selector]
    assert reconciled_role(result, expected) is None


def test_a_role_not_meant_to_aggregate_stops_aggregating() -> None:
    existing = role("plain", PODS)
    existing["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}
    result = reconciled_role(existing, role("plain", PODS))
    assert result is not None and "aggregationRule" not in result


def test_aggregated_rules_are_not_missing_rules(cluster: Cluster) -> None:
    """``admin`` has no rules of its own: those the controller wrote stay as they are."""
    reconcile(cluster)
    store = cluster.rbac("clusterroles")

    def fill(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["rules"] = [PODS]
        return obj

    cluster.run(store.update("", "admin", fill))
    assert reconcile(cluster).writes == 0


def test_adds_missing_subjects_and_keeps_extra_ones(cluster: Cluster) -> None:
    store = cluster.rbac("clusterrolebindings")
    cluster.run(store.create("", binding("b", group("extra"))))
    report = reconcile(cluster, [binding("b", group("wanted"))])
    assert report.updated == ["ClusterRoleBinding/b"]
    names = [s["name"] for s in cluster.get("clusterrolebindings", "b")["subjects"]]
    assert names == ["extra", "wanted"]
    assert reconcile(cluster, [binding("b", group("wanted"))]).writes == 0


def test_subjects_compare_with_defaulted_api_group() -> None:
    bare = {"kind": "Group", "name": "g"}
    assert reconciled_binding(binding("b", bare), binding("b", group("g"))) is None


def test_a_changed_role_ref_recreates_the_binding(cluster: Cluster) -> None:
    store = cluster.rbac("clusterrolebindings")
    cluster.run(store.create("", binding("b", group("g"), role_name="old")))
    uid = cluster.get("clusterrolebindings", "b")["metadata"]["uid"]
    report = reconcile(cluster, [binding("b", group("g"))])
    assert report.recreated == ["ClusterRoleBinding/b"]
    fresh = cluster.get("clusterrolebindings", "b")
    assert fresh["roleRef"]["name"] == "b" and fresh["metadata"]["uid"] != uid


def test_autoupdate_false_is_left_alone(cluster: Cluster) -> None:
    reconcile(cluster)
    store = cluster.rbac("clusterroles")

    def edit(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["metadata"]["annotations"][AUTOUPDATE] = "false"
        obj["rules"] = [SECRETS]
        return obj

    cluster.run(store.update("", "system:basic-user", edit))
    before = cluster.storage.current_revision()
    report = reconcile(cluster)
    assert "ClusterRole/system:basic-user" in report.protected
    assert report.writes == 0 and cluster.storage.current_revision() == before
    assert cluster.get("clusterroles", "system:basic-user")["rules"] == [SECRETS]


def test_reconciling_the_namespaced_defaults(cluster: Cluster) -> None:
    reconcile(cluster)
    store = cluster.rbac("rolebindings")

    def drop_subjects(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["subjects"] = obj["subjects"][:1]
        return obj

    name = "system::leader-locking-kube-controller-manager"
    cluster.run(store.update("platform-system", name, drop_subjects))
    report = reconcile(cluster)
    assert report.updated == [f"RoleBinding/platform-system/{name}"]
    stored = cluster.get("rolebindings", name, "platform-system")
    assert len(stored["subjects"]) == 3


def test_inputs_are_never_modified(cluster: Cluster) -> None:
    objs = default_policy()
    pristine = copy.deepcopy(objs)
    reconcile(cluster, objs)
    reconcile(cluster, objs)
    assert objs == pristine
