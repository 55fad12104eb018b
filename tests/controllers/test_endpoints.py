"""endpoints-controller and endpointslice-controller over real storage and a test clock:
a Service's selected pods, as a (fake) kubelet reports them, become its endpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.endpoints import EndpointsController, truncate
from platform_api.controllers.endpointslices import EndpointSliceController
from platform_api.endpoints.printers_cluster import format_endpoints
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup
from tests.spying import calls_of

Obj = dict[str, Any]
SERVICES, PODS, NODES = ("", "v1", "services"), ("", "v1", "pods"), ("", "v1", "nodes")
ENDPOINTS = ("", "v1", "endpoints")
SLICES = ("discovery.platform.io", "v1", "endpointslices")
NS = "default"


def service(name: str = "web", **spec: Any) -> Obj:
    body: Obj = {
        "selector": {"app": "web"},
        "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
        # what allocation fills in on a real server's create
        "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"],
        "ipFamilies": ["IPv4"],
        **spec,
    }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": {"tier": "front"}},
        "spec": body,
    }


def pod(name: str, node: str = "n1", app: str = "web") -> Obj:
    container = {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [container]},
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        st, hub, clock = self.cluster.stores, self.cluster.hub, self.cluster.clock
        controllers = (
            EndpointsController(st[SERVICES], st[PODS], st[ENDPOINTS], hub, clock),
            EndpointSliceController(st[SERVICES], st[PODS], st[NODES], st[SLICES], hub, clock),
        )
        for controller in controllers:
            # A loaded machine's slow syncs would batch pod changes past settle()'s steps.
            controller.timer = clock.seconds  # type: ignore[method-assign]
        self.start(*controllers)

    def report(self, name: str, ip: str, ready: bool, phase: str = "Running") -> None:
        """What a kubelet writes: the pod's IP, phase and Ready condition."""

        def status(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["status"] = {
                "phase": phase,
                "podIP": ip.split(",", maxsplit=1)[0],
                "podIPs": [{"ip": i} for i in ip.split(",")],
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            }
            return existing

        store = self.cluster.stores[PODS]
        self.cluster.run(store.update(NS, name, status, subresource="status"))
        self.cluster.settle()

    def endpoints(self, name: str = "web") -> Obj | None:
        return self.get(ENDPOINTS, name, NS)

    def slices(self) -> list[Obj]:
        items = self.cluster.stores[SLICES].list(NS, ListOptions()).items
        return sorted((s.object for s in items), key=lambda s: s["metadata"]["name"])


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    setup = Setup(str(tmp_path))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    node["metadata"]["labels"] = {"topology.kubernetes.io/zone": "zone-a"}
    setup.create(NODES, node)
    return setup


def test_pods_become_endpoints_as_they_get_ips_and_ready(s: Setup) -> None:
    made = s.create(SERVICES, service(), NS)
    ep = s.endpoints()
    assert ep is not None and "subsets" not in ep  # no pods yet: an empty Endpoints
    assert ep["metadata"]["labels"] == {
        "tier": "front",
        "endpoints.kubernetes.io/managed-by": "endpoint-controller",
    }
    (placeholder,) = s.slices()
    assert (placeholder["endpoints"], placeholder["ports"]) == (
        None,
        None,
    )  # nil after the Protobuf round trip, as kube answers
    s.create(PODS, pod("web-1"), NS)
    s.create(PODS, pod("web-2"), NS)
    s.create(PODS, pod("other", app="db"), NS)
    s.report("web-1", "10.1.0.1", ready=True)
    s.report("web-2", "10.1.0.2", ready=False)
    s.report("other", "10.1.0.9", ready=True)
    ep = s.endpoints()
    assert ep is not None
    uid1 = s.get(PODS, "web-1", NS)["metadata"]["uid"]  # type: ignore[index]
    assert ep["subsets"] == [
        {
            "addresses": [
                {
                    "ip": "10.1.0.1",
                    "nodeName": "n1",
                    "targetRef": {"kind": "Pod", "namespace": NS, "name": "web-1", "uid": uid1},
                }
            ],
            "notReadyAddresses": [
                {
                    "ip": "10.1.0.2",
                    "nodeName": "n1",
                    "targetRef": {
                        "kind": "Pod",
                        "namespace": NS,
                        "name": "web-2",
                        "uid": s.get(PODS, "web-2", NS)["metadata"]["uid"],  # type: ignore[index]
                    },
                }
            ],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        }
    ]
    (slice_,) = s.slices()
    assert slice_["metadata"]["name"] == placeholder["metadata"]["name"]  # filled in place
    assert slice_["metadata"]["labels"] == {
        "tier": "front",
        "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert slice_["metadata"]["ownerReferences"][0]["uid"] == made["metadata"]["uid"]
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert [
        (e["addresses"], e["conditions"], e["nodeName"], e["zone"]) for e in slice_["endpoints"]
    ] == [
        (["10.1.0.1"], {"ready": True, "serving": True, "terminating": False}, "n1", "zone-a"),
        (["10.1.0.2"], {"ready": False, "serving": False, "terminating": False}, "n1", "zone-a"),
    ]


def test_finished_deleted_and_unlabelled_pods_leave(s: Setup) -> None:
    s.create(SERVICES, service(), NS)
    for name in ("a", "b", "c"):
        s.create(PODS, pod(name), NS)
        s.report(name, f"10.1.0.{ord(name)}", ready=True)
    s.report("a", "10.1.0.97", ready=False, phase="Succeeded")
    s.delete(PODS, "b", NS)  # scheduled: terminating for its grace period
    ep = s.endpoints()
    assert ep is not None
    assert [a["targetRef"]["name"] for a in ep["subsets"][0]["addresses"]] == ["c"]
    (slice_,) = s.slices()
    assert [(e["targetRef"]["name"], e["conditions"]) for e in slice_["endpoints"]] == [
        ("b", {"ready": False, "serving": True, "terminating": True}),
        ("c", {"ready": True, "serving": True, "terminating": False}),
    ]
    s.delete(PODS, "b", NS, grace_period=0)  # its kubelet, once it has stopped
    (slice_,) = s.slices()
    assert [e["targetRef"]["name"] for e in slice_["endpoints"]] == ["c"]


def test_a_new_selector_and_relabelled_pods_change_the_members(s: Setup) -> None:
    s.create(SERVICES, service(), NS)
    for name, app in (("a", "web"), ("b", "web"), ("c", "api")):
        s.create(PODS, pod(name, app=app), NS)
        s.report(name, f"10.1.0.{ord(name)}", ready=True)

    def names() -> list[str]:
        ep = s.endpoints()
        assert ep is not None
        return [a["targetRef"]["name"] for a in ep["subsets"][0]["addresses"]]

    assert names() == ["a", "b"]
    s.change_spec(SERVICES, "web", NS, selector={"app": "api"})
    assert names() == ["c"]
    s.set_labels(PODS, "a", NS, {"app": "api"})
    assert names() == ["a", "c"]
    s.delete(SERVICES, "web", NS)
    assert all(key[1] != "web" for c in s.controllers for key in c.members)  # type: ignore[attr-defined]


def test_publish_not_ready_and_a_missing_node(s: Setup) -> None:
    s.create(SERVICES, service(publishNotReadyAddresses=True), NS)
    s.create(PODS, pod("far", node="no-such-node"), NS)
    s.report("far", "10.1.0.5", ready=False)
    ep = s.endpoints()
    assert ep is not None and [a["ip"] for a in ep["subsets"][0]["addresses"]] == ["10.1.0.5"]
    (slice_,) = s.slices()
    assert slice_["endpoints"][0]["conditions"] == {
        "ready": True,
        "serving": False,
        "terminating": False,
    }


def test_a_pod_on_an_unknown_node_is_left_out_of_slices(s: Setup) -> None:
    s.create(SERVICES, service(), NS)
    s.create(PODS, pod("far", node="no-such-node"), NS)
    s.report("far", "10.1.0.5", ready=True)
    (slice_,) = s.slices()
    assert slice_["endpoints"] is None  # kube skips it until the Node exists
    ep = s.endpoints()
    assert ep is not None and len(ep["subsets"][0]["addresses"]) == 1  # Endpoints do not ask


def test_a_node_that_appears_brings_in_its_pods_and_wakes_only_their_services(
    s: Setup,
) -> None:
    s.create(SERVICES, service(), NS)
    s.create(SERVICES, service("other", selector={"app": "other"}), NS)
    s.create(PODS, pod("far", node="n2"), NS)
    s.report("far", "10.1.0.5", ready=True)
    slices = s.cluster.stores[SLICES]
    with calls_of(s.controllers[1], "reconcile") as synced:
        s.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}})
    assert {key for (key,) in synced} == {(NS, "web")}  # "other" selects no pod on n2
    web = [x for x in s.slices() if x["metadata"]["labels"]["kubernetes.io/service-name"] == "web"]
    assert [e["nodeName"] for e in web[0]["endpoints"]] == ["n2"]
    assert len(slices.list(NS, ListOptions()).items) == 2


def test_slices_are_read_from_the_index_and_a_sync_sees_its_own_writes(s: Setup) -> None:
    store = s.cluster.stores[SLICES]
    controller = s.controllers[1]
    with calls_of(store, "list") as lists:
        s.create(PODS, pod("web-1"), NS)
        s.cluster.run(s.cluster.stores[SERVICES].create(NS, service()))  # no events out yet
        # two syncs in one turn: the second must see the slice the first created
        s.cluster.run(controller.reconcile((NS, "web")))
        s.cluster.run(controller.reconcile((NS, "web")))
    assert len(store.list(NS, ListOptions()).items) == 1  # no second placeholder
    with calls_of(store, "list") as more:
        s.report("web-1", "10.1.0.1", ready=True)
    assert lists == more == []
    (slice_,) = s.slices()
    assert slice_["endpoints"][0]["addresses"] == ["10.1.0.1"]


def test_dual_stack_and_headless(s: Setup) -> None:
    spec = {"clusterIP": "None", "clusterIPs": ["None"], "ipFamilies": ["IPv4", "IPv6"]}
    s.create(SERVICES, service(**spec), NS)
    s.create(PODS, pod("web-1"), NS)
    s.report("web-1", "10.1.0.1,fd00::1", ready=True)
    v4, v6 = sorted(s.slices(), key=lambda x: x["addressType"])
    assert (v4["addressType"], v4["endpoints"][0]["addresses"]) == ("IPv4", ["10.1.0.1"])
    assert (v6["addressType"], v6["endpoints"][0]["addresses"]) == ("IPv6", ["fd00::1"])
    assert v4["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    ep = s.endpoints()
    assert ep is not None and ep["metadata"]["labels"]["service.kubernetes.io/headless"] == ""


def test_no_selector_means_no_controller_and_a_deleted_service_takes_its_endpoints(
    s: Setup,
) -> None:
    s.create(SERVICES, service("manual", selector=None), NS)
    assert s.endpoints("manual") is None and s.slices() == []
    s.create(SERVICES, service(), NS)
    assert s.endpoints() is not None
    s.delete(SERVICES, "web", NS)
    assert s.endpoints() is None


def test_a_deleted_endpoints_comes_back(s: Setup) -> None:
    s.create(SERVICES, service(), NS)
    s.delete(ENDPOINTS, "web", NS)
    assert s.endpoints() is not None


def test_over_1000_addresses_are_truncated_not_ready_first() -> None:
    subsets = [
        {"addresses": [{"ip": f"r{i}"} for i in range(600)], "notReadyAddresses": []},
        {
            "addresses": [{"ip": f"q{i}"} for i in range(300)],
            "notReadyAddresses": [{"ip": f"n{i}"} for i in range(300)],
        },
    ]
    assert truncate(subsets)
    assert [len(x["addresses"]) for x in subsets] == [600, 300]
    assert sum(len(x["notReadyAddresses"]) for x in subsets) == 100


@pytest.mark.parametrize(
    "subsets, printed",
    [
        ([], "<none>"),
        (
            [
                {
                    "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                    "ports": [{"port": 80}, {"port": 443}],
                }
            ],
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...",
        ),
        ([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}], "[fd00::1]:80"),
        ([{"addresses": [{"ip": "10.0.0.1"}]}], "10.0.0.1"),  # headless, no ports
        ([{"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}], ""),
    ],
)
def test_kubectl_get_endpoints_column(subsets: list[Obj], printed: str) -> None:
    """kube's formatEndpoints: ready addresses only, three, then how many more."""
    assert format_endpoints(subsets) == printed
