"""Node-port allocation: held ports, a Service's own ports, the range running out, the
ports in use kept from events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission import nodeports
from platform_api.admission.nodeports import NodePortAllocation
from tests.admission.plugin_kit import Cluster, attrs, refused, run
from tests.spying import calls_of


def service(name: str, *node_ports: int, kind: str = "NodePort") -> dict[str, Any]:
    ports = [{"name": f"p{i}", "port": 80 + i} for i in range(max(1, len(node_ports)))]
    for port, number in zip(ports, node_ports, strict=False):
        port["nodePort"] = number
    spec = {"type": kind, "ports": ports, "selector": {"a": "b"}}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def allocator(cluster: Cluster, ports: tuple[int, int] = (30000, 32767)) -> NodePortAllocation:
    """``ports``: --service-node-port-range."""
    prefix = cluster.store("services").prefix
    return NodePortAllocation(cluster.storage, cluster.hub, prefix, ports)


def test_a_port_handed_out_is_held_until_its_service_is_stored(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    first = service("first", 30001)
    plugin.admit(attrs("CREATE", "services", "first"), first, None)
    second = service("second", 30001)
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "second"), second, None))
    assert error.code == 422 and "provided port is already allocated" in error.message
    # A dry run neither takes nor holds; a deleted Service's holds go with it.
    plugin.admit(attrs("DELETE", "services", "first"), None, None)
    plugin.admit(attrs("CREATE", "services", "second"), second, None)


def test_an_update_keeps_its_own_ports_and_checks_others(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    cluster.create("services", service("other", 30002), namespace="default")
    mine = service("mine", 30003)
    plugin.admit(attrs("CREATE", "services", "mine"), mine, None)
    stored = cluster.create("services", mine, namespace="default")
    update = service("mine")  # the body names no node port: the old one stays
    plugin.admit(attrs("UPDATE", "services", "mine"), update, stored)
    assert update["spec"]["ports"][0]["nodePort"] == 30003
    taken = service("mine", 30002)
    error = refused(lambda: plugin.admit(attrs("UPDATE", "services", "mine"), taken, stored))
    assert error.message.endswith(
        "spec.ports[0].nodePort: Invalid value: 30002: " + nodeports.ALLOCATED
    )


def test_a_full_range_is_an_internal_error(cluster: Cluster) -> None:
    plugin = allocator(cluster, (30000, 30001))
    plugin.admit(attrs("CREATE", "services", "a"), service("a", 30000, 30001), None)
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "b"), service("b"), None))
    assert (error.code, error.message) == (
        500,
        "Internal error occurred: failed to allocate a nodePort: range is full",
    )


def test_random_ports_come_from_above_the_static_band_first(cluster: Cluster) -> None:
    """kube's ServiceNodePortStaticSubrange: 30000-30085 of the default range is left for
    Services that name a port, until the rest is full."""
    assert [nodeports.static_band(n) for n in (16, 17, 100, 2768, 10000)] == [0, 16, 16, 86, 128]
    plugin = allocator(cluster)
    for i in range(40):
        svc = service(f"s{i}", 0, 0)
        for port in svc["spec"]["ports"]:
            del port["nodePort"]
        plugin.admit(attrs("CREATE", "services", f"s{i}"), svc, None)
        assert all(p["nodePort"] >= 30086 for p in svc["spec"]["ports"]), i
    small = allocator(cluster, (30000, 30019))  # 16 static, 4 above
    small.admit(
        attrs("CREATE", "services", "top"), service("top", 30016, 30017, 30018, 30019), None
    )
    last = service("last")
    small.admit(attrs("CREATE", "services", "last"), last, None)
    assert 30000 <= last["spec"]["ports"][0]["nodePort"] < 30016  # then from the band


def test_other_kinds_and_types_are_left_alone(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    plain = service("plain", kind="ClusterIP")
    with calls_of(cluster.storage, "get_list") as lists:
        plugin.admit(attrs("CREATE", "services", "plain"), plain, None)
    assert "nodePort" not in plain["spec"]["ports"][0]
    assert lists == []  # no other Service was read (a create read them all)
    pod = {"spec": {"ports": [{"port": 80}], "type": "NodePort"}}
    plugin.admit(attrs("CREATE", "pods", "p"), pod, None)
    assert "nodePort" not in pod["spec"]["ports"][0]


def test_a_port_outside_the_range_is_refused_alone_and_dry_runs_take_it(
    cluster: Cluster,
) -> None:
    """As the reference answered: a create asking node port 5 is refused with that error
    only (other errors of the Service are not reached: kube's allocator runs before its
    validation); a dry run of it is accepted (kube's dry-run allocator takes any)."""
    plugin = allocator(cluster)
    body = service("low", 5)
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "low"), body, None))
    assert (error.code, error.message) == (
        422,
        'Service "low" is invalid: spec.ports[0].nodePort: Invalid value: 5: provided port '
        "is not in the valid range. The range of valid ports is 30000-32767",
    )
    plugin.admit(attrs("CREATE", "services", "low", dry_run=True), body, None)
    assert body["spec"]["ports"][0]["nodePort"] == 5


def test_ports_in_use_are_read_once_then_kept_from_events(cluster: Cluster) -> None:
    """The first allocation lists the Services; later ones read none, yet see what was
    stored, changed and deleted since, even before the hub's next turn."""
    plugin = allocator(cluster)
    cluster.create("services", service("a", 30010), namespace="default")
    with calls_of(cluster.storage, "get_list") as lists:
        first = service("b", 30010)
        error = refused(lambda: plugin.admit(attrs("CREATE", "services", "b"), first, None))
        assert nodeports.ALLOCATED in error.message
        # Stored after the first read, not yet published: taken in before the check.
        cluster.create("services", service("c", 30011), namespace="default")
        taken = service("d", 30011)
        error = refused(lambda: plugin.admit(attrs("CREATE", "services", "d"), taken, None))
        assert nodeports.ALLOCATED in error.message
        run(cluster.store("services").delete("default", "a"))
        plugin.admit(attrs("CREATE", "services", "b"), service("b", 30010), None)
        stored = cluster.store("services").get("default", "c").object
        stored["spec"]["type"] = "ClusterIP"
        for port in stored["spec"]["ports"]:
            port.pop("nodePort")
        run(cluster.store("services").update("default", "c", lambda _: stored))
        plugin.admit(attrs("CREATE", "services", "d"), service("d", 30011), None)
    assert len(lists) == 1


def _ports(spec_ports: list[dict[str, Any]], kind: str = "NodePort") -> dict[str, Any]:
    svc = service("x", kind=kind)
    svc["spec"]["ports"] = spec_ports
    return svc


def test_a_create_shares_a_node_port_among_ports_of_one_number(cluster: Cluster) -> None:
    """kube's initNodePorts (the reference's answers): 53/TCP and 53/UDP get one node
    port, the one either asks for; another number asking for it is refused."""
    plugin = allocator(cluster)
    dns = _ports([{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
    plugin.admit(attrs("CREATE", "services", "dns"), dns, None)
    first, second = (p["nodePort"] for p in dns["spec"]["ports"])
    assert first == second and 30000 <= first <= 32767
    asked = _ports(
        [{"port": 54, "protocol": "TCP"}, {"port": 54, "protocol": "UDP", "nodePort": 30654}]
    )
    plugin.admit(attrs("CREATE", "services", "asked"), asked, None)
    assert [p["nodePort"] for p in asked["spec"]["ports"]] == [30654, 30654]
    two = _ports(
        [{"port": 55, "nodePort": 30655}, {"port": 56, "protocol": "UDP", "nodePort": 30655}]
    )
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "two"), two, None))
    assert error.message.endswith(
        "spec.ports[1].nodePort: Invalid value: 30655: " + nodeports.ALLOCATED
    )


def test_a_load_balancer_without_node_ports_keeps_those_it_asks_for(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    lb = _ports([{"port": 59, "nodePort": 30659}, {"port": 60}], kind="LoadBalancer")
    lb["spec"]["allocateLoadBalancerNodePorts"] = False
    plugin.admit(attrs("CREATE", "services", "lb"), lb, None)
    assert [p.get("nodePort") for p in lb["spec"]["ports"]] == [30659, None]
    again = _ports([{"port": 61, "nodePort": 30659}], kind="LoadBalancer")
    again["spec"]["allocateLoadBalancerNodePorts"] = False
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "again"), again, None))
    assert error.message.endswith(
        "spec.ports[0].nodePort: Invalid value: 30659: " + nodeports.ALLOCATED
    )


def test_an_update_naming_one_node_port_twice_for_a_protocol_is_kubes_plain_500(
    cluster: Cluster,
) -> None:
    plugin = allocator(cluster)
    old = _ports([{"port": 57, "nodePort": 30657}])
    plugin.admit(attrs("CREATE", "services", "x"), old, None)
    stored = cluster.create("services", old, namespace="default")
    same = _ports([{"port": 57, "nodePort": 30670}, {"port": 58, "nodePort": 30670}])
    error = refused(lambda: plugin.admit(attrs("UPDATE", "services", "x"), same, stored))
    assert (error.code, error.reason, error.message) == (500, "", "duplicate nodePort: {TCP 30670}")
    protocols = _ports(
        [{"port": 57, "nodePort": 30671}, {"port": 58, "protocol": "UDP", "nodePort": 30671}]
    )
    plugin.admit(attrs("UPDATE", "services", "x"), protocols, stored)  # one per protocol: fine


def test_a_load_balancer_that_stops_allocating_keeps_its_node_ports(cluster: Cluster) -> None:
    """kube drops node ports by type alone: a LoadBalancer turned to
    ``allocateLoadBalancerNodePorts: false`` keeps them until the body removes them,
    and one that names none gets none back."""
    plugin = allocator(cluster)
    lb = service("lb", 30701, 30702, kind="LoadBalancer")
    plugin.admit(attrs("CREATE", "services", "lb"), lb, None)
    stored = cluster.create("services", lb, namespace="default")
    off = service("lb", 30701, 30702, kind="LoadBalancer")
    off["spec"]["allocateLoadBalancerNodePorts"] = False
    plugin.admit(attrs("UPDATE", "services", "lb"), off, stored)
    assert [p.get("nodePort") for p in off["spec"]["ports"]] == [30701, 30702]
    none = service("lb", kind="LoadBalancer")
    none["spec"]["allocateLoadBalancerNodePorts"] = False
    stored_off = {**stored, "spec": off["spec"]}
    plugin.admit(attrs("UPDATE", "services", "lb"), none, stored_off)
    assert [p.get("nodePort") for p in none["spec"]["ports"]] == [None]


def test_a_service_leaving_node_ports_drops_them_when_the_set_is_kept(cluster: Cluster) -> None:
    """kube's sameNodePorts compares the sets of node ports, not the ports: a body that
    keeps them on its ports and adds a port without one, or drops a port, becomes a
    ClusterIP without them (the reference's answers); one that brings a node port of
    its own keeps them, for validation to refuse."""
    plugin = allocator(cluster)
    svc = _ports([{"port": 53, "name": "a"}, {"port": 443, "name": "b"}])
    plugin.admit(attrs("CREATE", "services", "x"), svc, None)
    stored = cluster.create("services", svc, namespace="default")
    kept = [{**p} for p in stored["spec"]["ports"]]
    added = {"port": 443, "name": "c", "protocol": "UDP"}
    moved = _ports([*({**p} for p in kept), added], kind="ClusterIP")
    plugin.admit(attrs("UPDATE", "services", "x"), moved, stored)
    assert [p.get("nodePort") for p in moved["spec"]["ports"]] == [None, None, None]
    fewer = _ports([{**kept[1]}], kind="ClusterIP")
    plugin.admit(attrs("UPDATE", "services", "x"), fewer, stored)
    assert [p.get("nodePort") for p in fewer["spec"]["ports"]] == [None]
    changed = [{**kept[0], "nodePort": 30999}, {**kept[1]}]
    other = _ports(changed, kind="ClusterIP")
    plugin.admit(attrs("UPDATE", "services", "x"), other, stored)
    assert [p.get("nodePort") for p in other["spec"]["ports"]] == [30999, kept[1]["nodePort"]]
