"""taint-eviction-controller over real storage and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.tainteviction import TaintEviction, tolerates, toleration_time
from platform_api.scheme.nodetaints import BRANDED
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup
from tests.spying import calls_of

Obj = dict[str, Any]
NODES, PODS, EVENTS = ("", "v1", "nodes"), ("", "v1", "pods"), ("", "v1", "events")
NS = "default"
LOST = {"key": BRANDED.unreachable, "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}


def pod(name: str, tolerations: list[Obj] | None = None, hold: bool = False) -> Obj:
    meta: Obj = {"name": name}
    if hold:
        meta["finalizers"] = ["example.com/hold"]
    spec: Obj = {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
        self.create(NODES, node)
        self.start(
            TaintEviction(st[PODS], st[NODES], st[EVENTS], self.cluster.hub, self.cluster.clock)
        )

    def taint(self, *taints: Obj) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing.setdefault("spec", {})["taints"] = list(taints)
            return existing

        self.cluster.run(self.cluster.stores[NODES].update("", "n1", write))
        self.cluster.settle()

    def live(self) -> list[str]:
        items = self.cluster.stores[PODS].list(NS, ListOptions()).items
        return sorted(
            s.object["metadata"]["name"]
            for s in items
            if not s.object["metadata"].get("deletionTimestamp")
        )


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_untolerated_pods_go_at_once_tolerated_ones_after_their_seconds(s: Setup) -> None:
    for_a_while = {"key": BRANDED.unreachable, "operator": "Exists", "effect": "NoExecute"}
    s.create(PODS, pod("intolerant", hold=True), NS)
    s.create(PODS, pod("patient", [{**for_a_while, "tolerationSeconds": 300}]), NS)
    s.create(PODS, pod("forever", [for_a_while]), NS)
    s.taint(LOST)
    assert s.live() == ["forever", "patient"]
    held = s.get(PODS, "intolerant", NS)
    assert held is not None
    (condition,) = held["status"]["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "DeletionByTaintManager",
        "message": "Taint manager: deleting due to NoExecute taint",
    }
    events = s.cluster.stores[EVENTS].list(NS, ListOptions()).items
    assert [(e.object["reason"], e.object["message"]) for e in events] == [
        ("TaintManagerEviction", "Marking for deletion Pod default/intolerant")
    ]
    s.wait(299)
    assert s.live() == ["forever", "patient"]
    s.wait(2)
    assert s.live() == ["forever"]


def test_a_taint_lifted_in_time_spares_the_pod(s: Setup) -> None:
    toleration = {
        "key": BRANDED.unreachable,
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 60,
    }
    s.create(PODS, pod("p", [toleration]), NS)
    s.taint(LOST)
    s.wait(30)
    s.taint()
    s.wait(60)
    assert s.live() == ["p"]


def test_only_a_change_of_no_execute_taints_wakes_the_nodes_pods(s: Setup) -> None:
    s.create(PODS, pod("p"), NS)

    def heartbeat(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
        return existing

    nodes = s.cluster.stores[NODES]
    with calls_of(s.controllers[0], "enqueue") as woken:
        s.cluster.run(nodes.update("", "n1", heartbeat, subresource="status"))
        s.taint({"key": "example.com/soft", "effect": "NoSchedule"})
    assert woken == []
    with calls_of(s.controllers[0], "enqueue") as woken:
        s.taint(LOST)
    assert woken == [((NS, "p"),)]


def test_toleration_matching_follows_kube() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert tolerates({"key": "k", "operator": "Equal", "value": "v"}, taint)
    assert tolerates({"key": "k", "value": "v", "effect": "NoExecute"}, taint)
    assert not tolerates({"key": "k", "value": "w"}, taint)
    assert not tolerates({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert tolerates({"operator": "Exists"}, taint)  # an empty key with Exists: every taint
    both = [{"operator": "Exists", "tolerationSeconds": 30}, {"key": "k", "operator": "Exists"}]
    assert toleration_time(both, [taint]) == 30.0
    assert toleration_time([{"key": "other", "operator": "Exists"}], [taint]) == 0.0
    assert toleration_time([{"key": "k", "operator": "Exists"}], [taint]) is None
