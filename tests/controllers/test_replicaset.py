"""replicaset-controller and replicationcontroller-controller over real storage and a
test clock (their writes through plain stores here; through the API in the server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers import podcontrol
from platform_api.controllers.replicaset import (
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    ReplicaSetController,
)
from platform_api.errors import StatusError
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS = ("", "v1", "pods"), ("", "v1", "events")
RS, RC = ("apps", "v1", "replicasets"), ("", "v1", "replicationcontrollers")
NS = "default"
TEMPLATE = {
    "metadata": {"labels": {"app": "web", "tier": "front"}, "annotations": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def replicaset(name: str = "web", replicas: int = 3, min_ready: int = 0) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "minReadySeconds": min_ready,
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
        },
    }


def pod(name: str, labels: dict[str, str], node: str = "") -> Obj:
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    if node:
        obj["spec"]["nodeName"] = node
    return obj


class Setup(ControllerSetup):
    def __init__(self, path: str, pods: Any = None) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st = self.cluster.stores
        args = (self.cluster.hub, self.cluster.clock)
        self.rs = ReplicaSetController(st[RS], pods or st[PODS], st[EVENTS], REPLICA_SET, *args)
        self.rc = ReplicaSetController(
            st[RC], pods or st[PODS], st[EVENTS], REPLICATION_CONTROLLER, *args
        )

    def pods(self) -> list[Obj]:
        items = self.cluster.stores[PODS].list(NS, ListOptions()).items
        return [s.object for s in items]

    def events(self) -> list[tuple[str, str, str]]:
        items = self.cluster.stores[EVENTS].list(NS, ListOptions()).items
        return sorted(
            (s.object["type"], s.object["reason"], s.object["message"].split(":")[0]) for s in items
        )

    def scale(self, name: str, replicas: int, kind: tuple[str, str, str] = RS) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["spec"]["replicas"] = replicas
            return existing

        self.cluster.run(self.cluster.stores[kind].update(NS, name, write))
        self.cluster.settle()

    def set_pod_status(self, name: str, status: Obj) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = status
            return existing

        self.cluster.run(self.cluster.stores[PODS].update(NS, name, write, subresource="status"))
        self.cluster.settle()

    def ready(self, name: str, since: float | None = None) -> None:
        stamp = format_timestamp(self.cluster.clock.seconds() if since is None else since)
        condition = {"type": "Ready", "status": "True", "lastTransitionTime": stamp}
        self.set_pod_status(name, {"phase": "Running", "conditions": [condition]})


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_a_replicaset_gets_its_pods_and_reports_them(s: Setup) -> None:
    s.start(s.rs)
    made = s.create(RS, replicaset(), NS)
    s.wait(0.1)
    pods = s.pods()
    assert len(pods) == 3
    for p in pods:
        meta = p["metadata"]
        assert meta["generateName"] == "web-" and meta["name"].startswith("web-")
        assert meta["labels"] == {"app": "web", "tier": "front"}
        assert meta["annotations"] == {"a": "b"}
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": made["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    assert status == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "terminatingReplicas": 0,
        "observedGeneration": 1,
    }
    assert s.events() == [("Normal", "SuccessfulCreate", "Created pod")] * 3


def test_scaling_down_deletes_unscheduled_and_unready_pods_first(s: Setup) -> None:
    s.start(s.rs)
    s.create(RS, replicaset(replicas=3), NS)
    s.wait(0.1)
    names = sorted(p["metadata"]["name"] for p in s.pods())
    # one ready on a node, one scheduled but not ready, one unscheduled
    s.set_pod_status(names[0], {"phase": "Running"})
    s.ready(names[0])
    s.scale("web", 1)
    s.wait(0.1)
    assert [p["metadata"]["name"] for p in s.pods()] == [names[0]]
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (1, 1, 1)
    assert ("Normal", "SuccessfulDelete", "Deleted pod") in s.events()


def test_orphans_that_match_are_adopted_and_strays_released(s: Setup) -> None:
    s.create(PODS, pod("orphan", {"app": "web"}), NS)
    s.create(PODS, pod("other", {"app": "db"}), NS)
    s.start(s.rs)
    rs = s.create(RS, replicaset(replicas=2), NS)
    s.wait(0.1)
    pods = {p["metadata"]["name"]: p for p in s.pods()}
    assert len(pods) == 3  # the orphan counts as one of the two
    refs = pods["orphan"]["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == [rs["metadata"]["uid"]]
    assert "ownerReferences" not in pods["other"]["metadata"]

    s.set_labels(PODS, "orphan", NS, {"app": "moved"})  # released and replaced
    pods = {p["metadata"]["name"]: p for p in s.pods()}
    assert len(pods) == 4
    assert pods["orphan"]["metadata"].get("ownerReferences", []) == []


def test_availability_waits_for_min_ready_seconds(s: Setup) -> None:
    s.start(s.rs)
    s.create(RS, replicaset(replicas=1, min_ready=10), NS)
    s.wait(0.1)
    (name,) = [p["metadata"]["name"] for p in s.pods()]
    s.ready(name)
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    assert (status["readyReplicas"], status.get("availableReplicas", 0)) == (1, 0)
    s.wait(10.5)  # the controller looks again when the pod becomes available
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    assert status["availableReplicas"] == 1


def test_terminating_pods_are_counted_apart(s: Setup) -> None:
    s.start(s.rs)
    s.create(RS, replicaset(replicas=1), NS)
    s.wait(0.1)
    (name,) = [p["metadata"]["name"] for p in s.pods()]

    def hold(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["metadata"]["finalizers"] = ["example.com/hold"]
        return existing

    s.cluster.run(s.cluster.stores[PODS].update(NS, name, hold))
    s.delete(PODS, name, NS)
    s.wait(0.1)
    assert len(s.pods()) == 2  # the terminating one and its replacement
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    assert (status["replicas"], status["terminatingReplicas"]) == (1, 1)


class Refusing:
    """A pods store whose creates are refused, as admission refuses them."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.attempts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def create(self, namespace: str, obj: Obj, **_: Any) -> Any:
        self.attempts += 1
        raise StatusError(403, "Forbidden", 'pods "web-x" is forbidden: exceeded quota: q')


def test_refused_creates_stop_the_batch_and_set_replica_failure(tmp_path: Path) -> None:
    probe = Setup(str(tmp_path / "a"))
    refusing = Refusing(probe.cluster.stores[PODS])
    s = Setup(str(tmp_path / "b"))
    refusing.store = s.cluster.stores[PODS]
    s.rs.pods = s.rs.pod_control.pods = refusing
    s.start(s.rs)
    s.cluster.run(s.cluster.stores[RS].create(NS, replicaset(replicas=5)))
    s.cluster.hub.flush()
    s.cluster.clock.advance(0)
    s.cluster.hub.flush()
    # Two syncs (the first one's status write wakes a second, as in kube), each stopped
    # by its first batch, of one create: 5 pods wanted, 2 attempts.
    assert refusing.attempts == 2
    status = s.get(RS, "web", NS)["status"]  # type: ignore[index]
    (condition,) = status["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": 'pods "web-x" is forbidden: exceeded quota: q',
    }
    # One Event, counted twice (client-go's correlator merges identical ones).
    assert s.events() == [("Warning", "FailedCreate", "Error creating")]
    (event,) = [e.object for e in s.cluster.stores[EVENTS].list(NS, ListOptions()).items]
    assert event["count"] == 2


def test_a_replication_controller_selects_by_map(s: Setup) -> None:
    s.start(s.rc)
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "old"},
        "spec": {"replicas": 2, "selector": {"app": "web"}, "template": TEMPLATE},
    }
    s.create(RC, rc, NS)
    s.wait(0.1)
    pods = s.pods()
    assert len(pods) == 2
    assert {r["kind"] for p in pods for r in p["metadata"]["ownerReferences"]} == {
        "ReplicationController"
    }
    status = s.get(RC, "old", NS)["status"]  # type: ignore[index]
    assert status == {"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 1}
    s.scale("old", 0, RC)
    s.wait(0.1)
    assert s.pods() == []


def test_deletion_order_follows_kube() -> None:
    now = 1_000_000.0

    def p(name: str, node: str = "", phase: str = "", ready_at: float | None = None) -> Obj:
        obj = pod(name, {}, node)
        obj["metadata"]["uid"] = name
        obj["status"] = {"phase": phase} if phase else {}
        if ready_at is not None:
            stamp = format_timestamp(ready_at)
            obj["status"]["conditions"] = [
                {"type": "Ready", "status": "True", "lastTransitionTime": stamp}
            ]
        return obj

    pods = [
        p("old-ready", "n1", "Running", now - 4000),
        p("new-ready", "n1", "Running", now - 10),
        p("running", "n1", "Running"),
        p("pending", "n1", "Pending"),
        p("unscheduled"),
    ]
    order = podcontrol.deletion_order(pods, {}, now)
    assert [o["metadata"]["name"] for o in order] == [
        "unscheduled",
        "pending",
        "running",
        "new-ready",
        "old-ready",
    ]
    # more siblings on a node: that node's pod first
    crowded = podcontrol.deletion_order([p("a", "n1"), p("b", "n2")], {"n2": 3, "n1": 1}, now)
    assert [o["metadata"]["name"] for o in crowded] == ["b", "a"]
