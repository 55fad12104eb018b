"""pod-garbage-collector-controller over real storage and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.podgc import CHECK_PERIOD, QUARANTINE, PodGC
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup
from tests.spying import calls_of

Obj = dict[str, Any]
PODS, NODES = ("", "v1", "pods"), ("", "v1", "nodes")
NS = "default"


def pod(name: str, node: str = "", phase: str = "", finalizers: tuple[str, ...] = ()) -> Obj:
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "finalizers": list(finalizers)},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    if node:
        obj["spec"]["nodeName"] = node
    if phase:
        obj["status"] = {"phase": phase}
    return obj


class Setup(ControllerSetup):
    def __init__(self, path: str, threshold: int = 12500) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        self.gc = PodGC(
            st[PODS], st[NODES], self.cluster.hub, self.cluster.clock, threshold=threshold
        )

    def names(self) -> list[str]:
        items = self.cluster.stores[PODS].list(NS, ListOptions()).items
        return sorted(s.object["metadata"]["name"] for s in items)

    def set_status(self, name: str, **status: Any) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = {**(existing.get("status") or {}), **status}
            return existing

        self.cluster.run(self.cluster.stores[PODS].update(NS, name, write, subresource="status"))


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_pods_of_a_deleted_node_go_after_the_quarantine(s: Setup) -> None:
    s.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    s.create(PODS, pod("on-n1", "n1"), NS)
    s.create(PODS, pod("on-gone", "gone"), NS)
    # held by a finalizer, so that what the collector wrote can be read afterwards
    s.create(PODS, pod("held", "gone", finalizers=("example.com/hold",)), NS)
    s.start(s.gc)
    s.wait(0.1)
    assert s.names() == ["held", "on-gone", "on-n1"]  # first seen gone: quarantined
    s.wait(CHECK_PERIOD)
    assert s.names() == ["held", "on-gone", "on-n1"]  # 20 s: still quarantined
    s.wait(CHECK_PERIOD)
    assert s.names() == ["held", "on-n1"]  # 40 s: gone
    held = s.get(PODS, "held", NS)
    assert held is not None and held["metadata"]["deletionTimestamp"]
    status = held["status"]
    assert status["phase"] == "Failed"
    (condition,) = [c for c in status["conditions"] if c["type"] == "DisruptionTarget"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True",
        "DeletionByPodGC",
        "PodGC: node no longer exists",
    )


def test_a_node_back_within_the_quarantine_keeps_its_pods(s: Setup) -> None:
    s.create(PODS, pod("p", "n2"), NS)
    s.start(s.gc)
    s.wait(CHECK_PERIOD)
    s.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}})
    s.wait(QUARANTINE + CHECK_PERIOD)
    assert s.names() == ["p"]


def test_passes_read_the_indexes_not_storage(s: Setup) -> None:
    """A pod created after the start is seen through the hub's events."""
    s.start(s.gc)
    with calls_of(s.cluster.stores[PODS], "list") as lists:
        s.create(PODS, pod("late", "never-there"), NS)
        s.wait(QUARANTINE + 2 * CHECK_PERIOD)
    assert lists == []
    assert s.names() == []


def test_terminated_pods_over_the_threshold_oldest_and_evicted_first(tmp_path: Path) -> None:
    s = Setup(str(tmp_path), threshold=2)
    for name in ("a", "b", "c", "d"):
        s.create(PODS, pod(name), NS)
    for name in ("a", "b", "d"):
        s.set_status(name, phase="Succeeded")
    s.set_status("c", phase="Failed", reason="Evicted")
    s.start(s.gc)
    s.wait(0.1)
    # 4 finished, 2 may stay: the evicted c first, then the oldest (same second: by name)
    assert s.names() == ["b", "d"]


def test_a_terminating_pod_on_an_out_of_service_node(s: Setup) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n3"},
        "spec": {"taints": [{"key": "node.kubernetes.io/out-of-service", "effect": "NoExecute"}]},
    }
    s.create(NODES, node)
    s.create(PODS, pod("stuck", "n3", finalizers=("example.com/hold",)), NS)
    s.create(PODS, pod("fine", "n3"), NS)
    s.delete(PODS, "stuck", NS)  # terminating: the finalizer holds it
    s.start(s.gc)
    s.wait(0.1)
    stuck = s.get(PODS, "stuck", NS)
    assert stuck is not None and stuck["status"]["phase"] == "Failed"
    assert s.names() == ["fine", "stuck"]
