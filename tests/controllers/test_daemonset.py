"""daemonset-controller over real storage and a test clock: Nodes come and go, get
labels and taints; a stand-in kubelet makes pods Running and Ready when a test says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers import daemonsetutil as dsu
from platform_api.controllers.daemonset import DaemonSetController
from platform_api.scheme import nodetaints as nt
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
PODS, EVENTS, NODES = ("", "v1", "pods"), ("", "v1", "events"), ("", "v1", "nodes")
SETS, REVISIONS = ("apps", "v1", "daemonsets"), ("apps", "v1", "controllerrevisions")
NS = "default"


def daemonset(**spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "agent:1"}]},
            },
            **spec,
        },
    }


def node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.cluster.clock.advance(1_000_000)
        st, args = self.cluster.stores, (self.cluster.hub, self.cluster.clock)
        self.start(
            DaemonSetController(st[SETS], st[PODS], st[NODES], st[REVISIONS], st[EVENTS], *args)
        )

    def pods(self) -> dict[str, Obj]:
        """Node name -> its daemon pod."""
        items = self.cluster.stores[PODS].list(NS, ListOptions()).items
        out: dict[str, Obj] = {}
        for stored in items:
            target = dsu.target_node(stored.object)
            assert target is not None and target not in out
            out[target] = stored.object
        return out

    def status(self) -> Obj:
        found = self.get(SETS, "agent", NS)
        assert found is not None
        status: Obj = found["status"]
        return status

    def taint(self, name: str, taints: list[Obj]) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["spec"]["taints"] = taints
            return existing

        self.cluster.run(self.cluster.stores[NODES].update("", name, write))
        self.wait(0.1)


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_a_pod_pinned_to_every_node(s: Setup) -> None:
    for name in ("n1", "n2"):
        s.create(NODES, node(name))
    made = s.create(SETS, daemonset(), NS)
    assert made["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] == "1"
    s.wait(0.1)
    pods = s.pods()
    assert sorted(pods) == ["n1", "n2"]
    pod = pods["n1"]
    (revision,) = [r.object for r in s.cluster.stores[REVISIONS].list(NS, ListOptions()).items]
    digest = revision["metadata"]["labels"][dsu.HASH_LABEL]
    assert pod["metadata"]["labels"] == {
        "app": "agent",
        dsu.HASH_LABEL: digest,
        dsu.GENERATION_LABEL: "1",
    }
    assert pod["metadata"]["generateName"] == "agent-"
    assert "nodeName" not in pod["spec"]  # the scheduler would bind it
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert terms == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
        ]
    }
    tolerations = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert (nt.BRANDED.not_ready, "NoExecute") in tolerations
    assert (nt.BRANDED.unschedulable, "NoSchedule") in tolerations
    status = s.status()
    assert status == {
        "currentNumberScheduled": 2,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 2,
        "numberReady": 0,
        "updatedNumberScheduled": 2,
        "numberUnavailable": 2,
        "observedGeneration": 1,
    }
    s.run_pods(NS)
    status = s.status()
    assert status["numberReady"] == 2 and status["numberAvailable"] == 2
    assert "numberUnavailable" not in status


def test_nodes_that_join_or_stop_fitting(s: Setup) -> None:
    s.create(NODES, node("a", {"disk": "ssd"}))
    s.create(NODES, node("b", {"disk": "hdd"}))
    s.create(
        SETS,
        daemonset(
            template={
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"disk": "ssd"},
                    "containers": [{"name": "c", "image": "agent:1"}],
                },
            }
        ),
        NS,
    )
    s.wait(0.1)
    assert sorted(s.pods()) == ["a"]
    s.create(NODES, node("c", {"disk": "ssd"}))
    s.wait(0.1)
    assert sorted(s.pods()) == ["a", "c"]
    s.taint("c", [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert sorted(s.pods()) == ["a", "c"]  # NoSchedule: the pod there stays
    s.taint("c", [{"key": "dedicated", "value": "db", "effect": "NoExecute"}])
    assert sorted(s.pods()) == ["a"]
    assert s.status()["desiredNumberScheduled"] == 1
    s.delete(NODES, "a")
    s.wait(0.1)
    assert s.pods() == {}  # its unbound pod had no Node left


def test_a_not_ready_node_still_gets_its_daemon_pod(s: Setup) -> None:
    s.create(NODES, node("n1", taints=[{"key": nt.BRANDED.not_ready, "effect": "NoSchedule"}]))
    s.create(SETS, daemonset(), NS)
    s.wait(0.1)
    assert sorted(s.pods()) == []  # NoSchedule not-ready is not among the daemon tolerations
    s.taint("n1", [{"key": nt.BRANDED.not_ready, "effect": "NoExecute"}])
    assert sorted(s.pods()) == ["n1"]


def test_rolling_update_within_max_unavailable(s: Setup) -> None:
    for name in ("n1", "n2", "n3"):
        s.create(NODES, node(name))
    s.create(SETS, daemonset(), NS)
    s.wait(0.1)
    s.run_pods(NS)
    s.change_spec(SETS, "agent", NS, image="agent:2")
    images = {n: p["spec"]["containers"][0]["image"] for n, p in s.pods().items()}
    assert sorted(images.values()) == ["agent:1", "agent:1", "agent:2"]  # one at a time
    for _ in range(4):
        s.run_pods(NS)
    images = {n: p["spec"]["containers"][0]["image"] for n, p in s.pods().items()}
    assert images == {"n1": "agent:2", "n2": "agent:2", "n3": "agent:2"}
    status = s.status()
    assert status["updatedNumberScheduled"] == 3 and status["numberAvailable"] == 3
    assert status["observedGeneration"] == 2
    pod = next(iter(s.pods().values()))
    assert pod["metadata"]["labels"][dsu.GENERATION_LABEL] == "2"
    revisions = s.cluster.stores[REVISIONS].list(NS, ListOptions()).items
    assert sorted(r.object["revision"] for r in revisions) == [1, 2]


def test_surge_starts_the_new_pod_beside_the_old(s: Setup) -> None:
    s.create(NODES, node("n1"))
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    s.create(SETS, daemonset(updateStrategy=strategy), NS)
    s.wait(0.1)
    s.run_pods(NS)
    s.change_spec(SETS, "agent", NS, image="agent:2")
    items = [p.object for p in s.cluster.stores[PODS].list(NS, ListOptions()).items]
    assert sorted(p["spec"]["containers"][0]["image"] for p in items) == ["agent:1", "agent:2"]
    s.run_pods(NS)
    s.wait(0.1)
    assert s.pods()["n1"]["spec"]["containers"][0]["image"] == "agent:2"


def test_a_failed_daemon_pod_is_replaced(s: Setup) -> None:
    s.create(NODES, node("n1"))
    s.create(SETS, daemonset(), NS)
    s.wait(0.1)
    uid = s.pods()["n1"]["metadata"]["uid"]
    s.run_pods(NS, phase="Failed")
    s.wait(0.1)
    assert s.pods()["n1"]["metadata"]["uid"] != uid
    events = [e.object for e in s.cluster.stores[EVENTS].list(NS, ListOptions()).items]
    assert any(e["reason"] == "FailedDaemonPod" for e in events)


def test_on_delete_waits_for_the_user(s: Setup) -> None:
    s.create(NODES, node("n1"))
    s.create(SETS, daemonset(updateStrategy={"type": "OnDelete"}), NS)
    s.wait(0.1)
    s.change_spec(SETS, "agent", NS, image="agent:2")
    pod = s.pods()["n1"]
    assert pod["spec"]["containers"][0]["image"] == "agent:1"
    s.delete(PODS, pod["metadata"]["name"], NS)
    s.wait(0.1)
    assert s.pods()["n1"]["spec"]["containers"][0]["image"] == "agent:2"


def test_the_template_generation_annotation_is_the_servers(s: Setup) -> None:
    """kube's DaemonSet strategy: 1 on create, one more per template change, and a
    client's own value for it is not kept."""
    made = s.create(SETS, daemonset(), NS)
    assert made["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] == "1"
    s.change_spec(SETS, "agent", NS, minReadySeconds=5)
    found = s.get(SETS, "agent", NS)
    assert found is not None and found["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] == "1"
    s.change_spec(SETS, "agent", NS, image="agent:2")
    found = s.get(SETS, "agent", NS)
    assert found is not None and found["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] == "2"

    def forge(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] = "99"
        return existing

    s.cluster.run(s.cluster.stores[SETS].update(NS, "agent", forge))
    found = s.get(SETS, "agent", NS)
    assert found is not None and found["metadata"]["annotations"][dsu.TEMPLATE_GENERATION] == "2"


def test_the_template_with_daemon_tolerations_is_made_once_per_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """should_run asks for it per Node, three times a sync: made once per template object
    (the informer replaces objects, never changes them in place)."""
    made: list[Obj] = []
    real = dsu.with_daemon_tolerations

    def counted(spec: Obj, *keys: Any) -> Obj:
        made.append(spec)
        return real(spec, *keys)

    monkeypatch.setattr(dsu, "with_daemon_tolerations", counted)
    ds = daemonset()
    nodes = [{"metadata": {"name": f"n{i}"}, "spec": {}} for i in range(50)]
    assert all(dsu.should_run(ds, node) == (True, True) for node in nodes)
    assert len(made) == 1
    changed = daemonset()  # another object (a newer version of it): made again
    taint = {"key": "k", "effect": nt.NO_SCHEDULE}
    assert dsu.should_run(changed, {"metadata": {"name": "n"}, "spec": {"taints": [taint]}}) == (
        False,
        True,
    )
    assert len(made) == 2


def test_daemon_pods_tolerate_the_control_planes_taints_under_either_prefix() -> None:
    """A server with kube's group names taints Nodes with kube's keys, and its daemon
    pods tolerate those (and judging a Node, either prefix is the control plane's)."""
    upstream = nt.keys(upstream=True)
    template = dsu.pod_template(daemonset(), "h", upstream)
    tolerated = {(t["key"], t["effect"]) for t in template["spec"]["tolerations"]}
    assert tolerated == {
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    }
    for keys in (nt.BRANDED, upstream):
        taints = [{"key": keys.not_ready, "effect": nt.NO_EXECUTE}]
        node = {"metadata": {"name": "n"}, "spec": {"taints": taints}}
        assert dsu.should_run(daemonset(), node) == (True, True)
