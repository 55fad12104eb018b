"""node-lifecycle-controller over real storage and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.nodelifecycle import NodeLifecycle
from platform_api.scheme import nodetaints as taints
from platform_api.scheme.namespaces import NODE_LEASE
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
from tests.controllers.kit import ControllerSetup
from tests.spying import calls_of

Obj = dict[str, Any]
NODES, PODS, EVENTS = ("", "v1", "nodes"), ("", "v1", "pods"), ("", "v1", "events")
LEASES = ("coordination.platform.io", "v1", "leases")


class Setup(ControllerSetup):
    def __init__(self, path: str, keys: taints.TaintKeys = taints.BRANDED) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        self.controller = NodeLifecycle(
            st[NODES],
            st[LEASES],
            st[PODS],
            st[EVENTS],
            (NODE_LEASE,),
            self.cluster.hub,
            self.cluster.clock,
            keys=keys,
        )

    def node(self, name: str, conditions: dict[str, str] | None = None, **spec: Any) -> None:
        stamp = format_timestamp(self.cluster.clock.seconds())
        node: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}
        self.create(NODES, node)
        if conditions:
            self.report(name, conditions, stamp)

    def report(self, name: str, conditions: dict[str, str], stamp: str | None = None) -> None:
        """What a kubelet's status update writes: each condition with a new heartbeat."""
        stamp = stamp or format_timestamp(self.cluster.clock.seconds())

        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = {
                "conditions": [
                    {
                        "type": t,
                        "status": s,
                        "lastHeartbeatTime": stamp,
                        "lastTransitionTime": stamp,
                    }
                    for t, s in conditions.items()
                ]
            }
            return existing

        store = self.cluster.stores[NODES]
        self.cluster.run(store.update("", name, write, subresource="status"))
        self.cluster.settle()

    def pass_time(self, seconds: float) -> None:
        """In the controller's 5 s monitoring steps, as a real clock would."""
        for _ in range(int(seconds // 5)):
            self.wait(5)

    def taints(self, name: str) -> list[tuple[str, str]]:
        node = self.get(NODES, name)
        assert node is not None
        return [(t["key"], t["effect"]) for t in node["spec"].get("taints") or []]

    def conditions(self, name: str) -> dict[str, tuple[str, str]]:
        node = self.get(NODES, name)
        assert node is not None
        return {c["type"]: (c["status"], c.get("reason", "")) for c in node["status"]["conditions"]}


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    setup = Setup(str(tmp_path))
    setup.start(setup.controller)
    return setup


def test_a_ready_node_loses_the_not_ready_taint_and_keeps_its_own(s: Setup) -> None:
    own = {"key": "example.com/gpu", "effect": "NoSchedule"}
    not_ready = {"key": taints.BRANDED.not_ready, "effect": "NoSchedule"}
    s.node("n1", {"Ready": "False"}, taints=[not_ready, own])
    s.wait(0.1)
    assert s.taints("n1")[:2] == [
        ("example.com/gpu", "NoSchedule"),
        (taints.BRANDED.not_ready, "NoSchedule"),
    ]
    s.report("n1", {"Ready": "True"})
    assert s.taints("n1") == [("example.com/gpu", "NoSchedule")]


def test_with_kubes_group_names_the_taints_are_kubes_and_replace_the_branded_ones(
    tmp_path: Path,
) -> None:
    """--serve-upstream-groups: stock components and charts tolerate kube's keys."""
    s = Setup(str(tmp_path), taints.keys(upstream=True))
    s.start(s.controller)
    branded = {"key": taints.BRANDED.not_ready, "effect": "NoSchedule"}  # from before the flag
    s.node("u1", {"Ready": "False", "DiskPressure": "True"}, taints=[branded], unschedulable=True)
    s.wait(0.1)
    assert s.taints("u1") == [
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    ]
    s.report("u1", {"Ready": "True", "DiskPressure": "False"})
    assert s.taints("u1") == [("node.kubernetes.io/unschedulable", "NoSchedule")]


def test_conditions_and_unschedulable_become_taints(s: Setup) -> None:
    s.node("n2", {"Ready": "False", "MemoryPressure": "True"}, unschedulable=True)
    s.wait(0.1)
    assert s.taints("n2") == [
        (taints.BRANDED.not_ready, "NoSchedule"),
        (taints.BRANDED.memory_pressure, "NoSchedule"),
        (taints.BRANDED.unschedulable, "NoSchedule"),
        (taints.BRANDED.not_ready, "NoExecute"),
    ]
    node = s.get(NODES, "n2")
    assert node is not None
    assert node["spec"]["taints"][-1]["timeAdded"]  # NoExecute taints say when
    s.report("n2", {"Ready": "True", "MemoryPressure": "False"})
    assert s.taints("n2") == [(taints.BRANDED.unschedulable, "NoSchedule")]


def test_a_node_that_stops_reporting_becomes_unknown_and_its_pods_not_ready(s: Setup) -> None:
    s.node("n3", {"Ready": "True", "MemoryPressure": "False"})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n3", "containers": [{"name": "c", "image": "nginx"}]},
    }
    s.create(PODS, pod, "default")

    def ready(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        return existing

    s.cluster.run(s.cluster.stores[PODS].update("default", "p", ready, subresource="status"))
    s.pass_time(45)  # within the 50 s grace period (counted from when the controller saw it)
    assert s.conditions("n3")["Ready"] == ("True", "")
    s.pass_time(15)
    assert s.conditions("n3") == {
        "Ready": ("Unknown", "NodeStatusUnknown"),
        "MemoryPressure": ("Unknown", "NodeStatusUnknown"),
        "DiskPressure": ("Unknown", "NodeStatusNeverUpdated"),
        "PIDPressure": ("Unknown", "NodeStatusNeverUpdated"),
    }
    assert (taints.BRANDED.unreachable, "NoSchedule") in s.taints("n3")
    assert (taints.BRANDED.unreachable, "NoExecute") in s.taints("n3")
    got = s.get(PODS, "p", "default")
    assert got is not None and got["status"]["conditions"][0]["status"] == "False"
    events = s.cluster.stores[EVENTS].list("default", ListOptions()).items
    assert [(e.object["reason"], e.object["message"]) for e in events] == [
        ("NodeNotReady", "Node n3 status is now: NodeNotReady")
    ]
    s.report("n3", {"Ready": "True"})  # back: the taints go
    assert s.taints("n3") == []


def test_nodes_lost_together_have_their_pods_read_once(s: Setup) -> None:
    """kube reads a lost Node's pods from an index; here one list serves every Node
    lost in a pass (a list per Node was quadratic when a fleet stops reporting)."""
    store = s.cluster.stores[PODS]
    for name in ("a", "b", "c"):
        s.node(name, {"Ready": "True"})
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{name}"},
            "spec": {"nodeName": name, "containers": [{"name": "c", "image": "nginx"}]},
        }
        s.create(PODS, pod, "default")

        def ready(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
            return existing

        s.cluster.run(store.update("default", f"p-{name}", ready, subresource="status"))
    with calls_of(store, "list") as lists:
        s.pass_time(60)
    assert len(lists) == 1
    for name in ("a", "b", "c"):
        got = s.get(PODS, f"p-{name}", "default")
        assert got is not None and got["status"]["conditions"][0]["status"] == "False"


def test_lease_renewals_keep_a_node_alive(s: Setup) -> None:
    s.node("n4", {"Ready": "True"})
    lease = {
        "apiVersion": "coordination.platform.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n4"},
        "spec": {"holderIdentity": "n4"},
    }
    s.create(LEASES, lease, NODE_LEASE)
    for _ in range(12):  # 120 s of renewals, no status update

        def renew(existing: Obj | None) -> Obj:
            assert existing is not None
            stamp = format_timestamp(s.cluster.clock.seconds()).replace("Z", ".000000Z")
            existing["spec"]["renewTime"] = stamp
            return existing

        s.cluster.run(s.cluster.stores[LEASES].update(NODE_LEASE, "n4", renew))
        s.pass_time(10)
    assert s.conditions("n4")["Ready"] == ("True", "")


def test_renewals_wait_for_the_next_health_pass(s: Setup) -> None:
    """As kube's: the Leases are read at each 5 s pass, not acted on as they come (a
    pass per renewal judged every Node on every Node's heartbeat)."""
    names = [f"r{i}" for i in range(5)]
    for name in names:
        s.node(name, {"Ready": "True"})
        lease = {"metadata": {"name": name}, "spec": {"holderIdentity": name}}
        s.create(
            LEASES,
            {"apiVersion": "coordination.platform.io/v1", "kind": "Lease", **lease},
            NODE_LEASE,
        )
    s.wait(0.1)
    leases = s.cluster.stores[LEASES]
    with calls_of(s.cluster.stores[NODES], "list") as passes:
        for _ in range(4):
            for name in names:
                s.cluster.run(leases.update(NODE_LEASE, name, _renewed(s)))
                s.wait(0.2)
    assert len(passes) <= 2  # the 5 s passes due in 4 s, not one per renewal (20)


def _renewed(s: Setup) -> Any:
    def renew(existing: Obj | None) -> Obj:
        assert existing is not None
        stamp = format_timestamp(s.cluster.clock.seconds()).replace("Z", ".000000Z")
        existing["spec"]["renewTime"] = stamp
        return existing

    return renew


def test_a_node_that_never_reported_is_unknown_after_the_startup_grace(s: Setup) -> None:
    s.node("n5", taints=[{"key": taints.BRANDED.not_ready, "effect": "NoSchedule"}])
    s.wait(0.1)
    # As kube's controller does: no Ready condition calls for no taint.
    assert s.taints("n5") == []
    s.pass_time(55)
    node = s.get(NODES, "n5")
    assert node is not None and "conditions" not in (node.get("status") or {})
    s.pass_time(15)
    assert s.conditions("n5")["Ready"] == ("Unknown", "NodeStatusNeverUpdated")
