"""The clusterrole-aggregation-controller, over real storage, the hub and an informer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from platform_api.authorization.rbac.reconcile import Reconciler
from platform_api.controllers.aggregation import (
    ClusterRoleAggregation,
    aggregate_rules,
)
from platform_api.selectors import SelectorError, label_selector_from
from tests.authorization.rbac_cluster import RBAC, Cluster, Obj
from tests.spying import calls_of

PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
JOBS = {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]}
SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}


def role(name: str, *rules: Obj, labels: dict[str, str] | None = None, select: str = "") -> Obj:
    obj: Obj = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels or {}},
        "rules": list(rules),
    }
    if select:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {select: "true"}}]}
    return obj


class Running:
    """A cluster with the controller started on it."""

    def __init__(self, path: str) -> None:
        self.cluster = Cluster(path)
        self.store = self.cluster.rbac("clusterroles")
        self.controller = ClusterRoleAggregation(
            self.store, None, self.cluster.hub, self.cluster.clock
        )

    def create(self, obj: Obj) -> None:
        self.cluster.run(self.store.create("", obj))
        self.cluster.settle()

    def relabel(self, name: str, labels: dict[str, str]) -> None:
        def edit(obj: Obj | None) -> Obj:
            assert obj is not None
            obj["metadata"]["labels"] = labels
            return obj

        self.cluster.run(self.store.update("", name, edit))
        self.cluster.settle()

    def rules(self, name: str) -> list[Obj]:
        rules: list[Obj] = self.cluster.get("clusterroles", name).get("rules") or []
        return rules


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    r = Running(str(tmp_path / "db"))
    r.controller.start()
    yield r
    r.controller.stop()


def test_selected_roles_rules_are_gathered(running: Running) -> None:
    running.create(role("agg", select="pick"))
    running.create(role("b", JOBS, labels={"pick": "true"}))
    running.create(role("a", PODS, labels={"pick": "true"}))
    running.create(role("other", SECRETS, labels={"pick": "false"}))
    assert running.rules("agg") == [PODS, JOBS]  # by role name: a, then b


def test_removing_a_label_shrinks_the_rules(running: Running) -> None:
    running.create(role("a", PODS, labels={"pick": "true"}))
    running.create(role("b", JOBS, labels={"pick": "true"}))
    running.create(role("agg", select="pick"))
    assert running.rules("agg") == [PODS, JOBS]
    running.relabel("a", {})
    assert running.rules("agg") == [JOBS]
    running.cluster.run(running.store.delete("", "b"))
    running.cluster.settle()
    assert running.rules("agg") == []


def test_unchanged_rules_are_not_rewritten(running: Running) -> None:
    running.create(role("a", PODS, labels={"pick": "true"}))
    running.create(role("agg", select="pick"))
    revision = running.cluster.get("clusterroles", "agg")["metadata"]["resourceVersion"]
    running.create(role("unrelated", SECRETS))
    assert running.cluster.get("clusterroles", "agg")["metadata"]["resourceVersion"] == revision


def test_only_aggregates_selecting_the_changed_role_are_synced(running: Running) -> None:
    """kube syncs every aggregated role on any change, each reading all roles; here a
    change syncs the aggregates that select the role before or after it, and the role."""
    running.create(role("a", PODS, labels={"pick": "true"}))
    running.create(role("agg", select="pick"))
    running.create(role("other-agg", select="choose"))
    with calls_of(running.controller, "sync") as synced:
        running.create(role("unrelated", SECRETS, labels={"x": "y"}))
        assert synced == []
        running.relabel("unrelated", {"pick": "true"})
        # (Its rewrite is a change of "agg" itself: synced again, writing nothing.)
        assert {c[0] for c in synced} == {"agg"} and running.rules("agg") == [PODS, SECRETS]
        synced.clear()
        running.relabel("unrelated", {"choose": "true"})  # leaves one, joins the other
        assert {c[0] for c in synced} == {"agg", "other-agg"}
        assert running.rules("agg") == [PODS] and running.rules("other-agg") == [SECRETS]

    # An aggregate's own rules edited by hand are put back.
    def edit(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["rules"] = [JOBS]
        return obj

    running.cluster.run(running.store.update("", "agg", edit))
    running.cluster.settle()
    assert running.rules("agg") == [PODS]


def test_the_defaults_aggregate_into_view_edit_and_admin(running: Running) -> None:
    report = running.cluster.run(Reconciler(running.cluster.stores).run())
    assert not report.failed
    running.cluster.settle()
    view, edit, admin = running.rules("view"), running.rules("edit"), running.rules("admin")
    assert view == running.rules("system:aggregate-to-view")
    # Selected roles in name order: "edit" < "system:..." < "view".
    assert edit == running.rules("system:aggregate-to-edit") + view
    assert admin == edit + running.rules("system:aggregate-to-admin")
    assert not any("secrets" in r.get("resources", []) for r in view)


def test_a_started_controller_fills_roles_that_exist_already(tmp_path: Path) -> None:
    r = Running(str(tmp_path / "db"))
    r.cluster.run(r.store.create("", role("a", PODS, labels={"pick": "true"})))
    r.cluster.run(r.store.create("", role("agg", select="pick")))
    r.controller.start()
    r.cluster.settle()
    assert r.rules("agg") == [PODS]
    r.controller.stop()


def test_duplicates_are_dropped_and_itself_is_skipped() -> None:
    agg = role("agg", SECRETS, labels={"pick": "true"}, select="pick")
    a = role("a", PODS, JOBS, labels={"pick": "true"})
    b = role("b", {**PODS, "resourceNames": []}, labels={"pick": "true"})
    assert aggregate_rules(agg, [b, agg, a]) == [PODS, JOBS]


def test_several_selectors_are_taken_in_turn() -> None:
    agg = role("agg")
    agg["aggregationRule"] = {
        "clusterRoleSelectors": [{"matchLabels": {"second": "x"}}, {"matchLabels": {"first": "x"}}]
    }
    a = role("a", PODS, labels={"first": "x"})
    b = role("b", JOBS, labels={"second": "x"})
    assert aggregate_rules(agg, [a, b]) == [JOBS, PODS]


def test_match_expressions() -> None:
    selector = label_selector_from(
        {
            "matchLabels": {"tier": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector.matches({"tier": "web", "env": "prod"})
    assert not selector.matches({"tier": "web", "env": "dev"})
    assert not selector.matches({"tier": "web", "env": "prod", "legacy": "1"})
    assert label_selector_from({}).matches({"anything": "at all"})  # kube: empty selects all
    with pytest.raises(SelectorError):
        label_selector_from({"matchExpressions": [{"key": "k", "operator": "Near"}]})
