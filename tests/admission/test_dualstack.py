"""Cluster IPs on a dual-stack cluster (``--service-cluster-ip-range`` with an IPv4 and
an IPv6 CIDR): each case as kube-apiserver v1.36 answered it with the same two ranges."""

from __future__ import annotations

import copy
import ipaddress
from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.clusterip import ALLOCATED, ClusterIPAllocation
from platform_api.admission.interface import Attributes
from tests.admission.plugin_kit import Cluster, attrs, refused, run
from tests.admission.test_clusterip import cidr, held, service

NET = "networking.platform.io"
V4, V6 = "10.0.0.0/24", "fd00:10::/108"
Obj = dict[str, Any]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    c = Cluster(str(tmp_path / "db"))
    c.create("servicecidrs", cidr("kubernetes", V4, V6), group=NET)
    return c


def allocator(cluster: Cluster, ranges: str = f"{V4},{V6}") -> ClusterIPAllocation:
    addresses, cidrs = cluster.store("ipaddresses", NET), cluster.store("servicecidrs", NET)
    return ClusterIPAllocation(addresses, cidrs, ranges)


class Request:
    """One request's attributes, with what it asked to be done on failure and success."""

    def __init__(self, operation: str, name: str, dry_run: bool = False) -> None:
        base = attrs(operation, "services", name)
        self.undo: list[Any] = []
        self.done: list[Any] = []
        self.attrs = Attributes(
            base.operation,
            base.resource,
            "",
            "default",
            name,
            base.user,
            dry_run,
            on_failure=self.undo.append,
            on_success=self.done.append,
        )

    def succeed(self) -> None:
        for action in self.done:
            run(action())


def fields(obj: Obj) -> tuple[Any, ...]:
    spec = obj["spec"]
    return (spec["clusterIPs"], spec["ipFamilies"], spec["ipFamilyPolicy"])


def create(plugin: ClusterIPAllocation, name: str, **spec: Any) -> Obj:
    obj = service(name, **spec)
    run(plugin.admit(Request("CREATE", name).attrs, obj, None))
    return obj


def update(plugin: ClusterIPAllocation, old: Obj, **changes: Any) -> tuple[Obj, Request]:
    """``old`` with ``changes`` to its spec (None removes a field), admitted as an update."""
    new = copy.deepcopy(old)
    for key, value in changes.items():
        if value is None:
            new["spec"].pop(key, None)
        else:
            new["spec"][key] = value
    request = Request("UPDATE", old["metadata"]["name"])
    run(plugin.admit(request.attrs, new, old))
    return new, request


def in_range(ip: str, cidr_text: str) -> bool:
    return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr_text)


def test_single_stack_by_default_of_the_primary_family(cluster: Cluster) -> None:
    obj = create(allocator(cluster), "s1")
    ips, families, policy = fields(obj)
    assert (len(ips), families, policy) == (1, ["IPv4"], "SingleStack")
    assert in_range(ips[0], V4) and held(cluster) == {ips[0]: "s1"}


@pytest.mark.parametrize(
    ("spec", "families"),
    [
        ({"ipFamilyPolicy": "PreferDualStack"}, ["IPv4", "IPv6"]),
        ({"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv6"]}, ["IPv6", "IPv4"]),
    ],
)
def test_dual_stack_services_get_an_address_of_each_family(
    cluster: Cluster, spec: Obj, families: list[str]
) -> None:
    obj = create(allocator(cluster), "s2", **spec)
    ips, got, _ = fields(obj)
    assert got == families and obj["spec"]["clusterIP"] == ips[0]
    for ip, family in zip(ips, families, strict=True):
        assert in_range(ip, V4 if family == "IPv4" else V6)
    # the upper part of the IPv6 range first, past kube's static subrange of 256
    v6 = ipaddress.ip_address(ips[families.index("IPv6")])
    assert int(v6) - int(ipaddress.ip_address("fd00:10::")) > 256
    assert held(cluster) == dict.fromkeys(ips, "s2")


def test_the_families_follow_the_addresses_asked_for(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    only6 = create(plugin, "s4", ipFamilies=["IPv6"])
    assert fields(only6)[1:] == (["IPv6"], "SingleStack")
    assert in_range(only6["spec"]["clusterIPs"][0], V6)
    both = create(
        plugin, "s5", ipFamilyPolicy="PreferDualStack", clusterIP="10.0.0.7",
        clusterIPs=["10.0.0.7", "fd00:10::7"],
    )  # fmt: skip
    assert fields(both) == (["10.0.0.7", "fd00:10::7"], ["IPv4", "IPv6"], "PreferDualStack")
    six_first = create(
        plugin, "s7", ipFamilyPolicy="PreferDualStack", clusterIP="fd00:10::9",
        clusterIPs=["fd00:10::9"],
    )  # fmt: skip
    ips, families, _ = fields(six_first)
    assert ips[0] == "fd00:10::9" and families == ["IPv6", "IPv4"] and in_range(ips[1], V4)


def test_headless_services_take_both_families_and_no_address(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    selectorless: Obj = service("s8", clusterIP="None")
    run(plugin.admit(Request("CREATE", "s8").attrs, selectorless, None))
    assert fields(selectorless) == (["None"], ["IPv4", "IPv6"], "RequireDualStack")
    selected = service(
        "s9", clusterIP="None", ipFamilyPolicy="PreferDualStack", selector={"a": "b"}
    )
    run(plugin.admit(Request("CREATE", "s9").attrs, selected, None))
    assert fields(selected) == (["None"], ["IPv4", "IPv6"], "PreferDualStack")
    assert held(cluster) == {}


def test_a_taken_secondary_address_refuses_the_service_and_gives_the_first_back(
    cluster: Cluster,
) -> None:
    plugin = allocator(cluster)
    create(plugin, "s6", clusterIP="fd00:10::8")
    obj = service(
        "s13", clusterIP="10.0.0.20", clusterIPs=["10.0.0.20", "fd00:10::8"],
        ipFamilyPolicy="RequireDualStack",
    )  # fmt: skip
    request = Request("CREATE", "s13")
    error = refused(lambda: plugin.admit(request.attrs, obj, None))
    assert error.code == 422 and error.message == (
        'Service "s13" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.20","fd00:10::8"]: '
        f"failed to allocate IP fd00:10::8: {ALLOCATED}"
    )
    # kube leaves the first address written until its repair loop finds it; here the
    # failed request gives it back at once
    assert held(cluster) == {"10.0.0.20": "s13", "fd00:10::8": "s6"} and len(request.undo) == 1
    run(request.undo[0]())
    assert held(cluster) == {"fd00:10::8": "s6"}


def test_a_dry_run_shows_each_ranges_network_address(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    obj = service("dr", ipFamilyPolicy="RequireDualStack")
    run(plugin.admit(Request("CREATE", "dr", dry_run=True).attrs, obj, None))
    assert fields(obj)[:2] == (["10.0.0.0", "fd00:10::"], ["IPv4", "IPv6"])
    assert held(cluster) == {}


def test_an_upgrade_to_dual_stack_adds_the_secondary_address(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s1")
    new, _ = update(plugin, old, ipFamilyPolicy="PreferDualStack")
    ips, families, policy = fields(new)
    assert ips[0] == old["spec"]["clusterIP"] and families == ["IPv4", "IPv6"]
    assert in_range(ips[1], V6) and policy == "PreferDualStack"
    assert held(cluster) == dict.fromkeys(ips, "s1")
    six = create(plugin, "s4", ipFamilies=["IPv6"])
    named, _ = update(plugin, six, ipFamilyPolicy="RequireDualStack", ipFamilies=["IPv6", "IPv4"])
    assert fields(named)[1] == ["IPv6", "IPv4"] and in_range(named["spec"]["clusterIPs"][1], V4)


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ({"clusterIPs": "first"}, "cluster IP"),
        ({"ipFamilies": ["IPv4"]}, "IP family"),
    ],
)
def test_dropping_a_secondary_needs_single_stack(cluster: Cluster, change: Obj, what: str) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s2", ipFamilyPolicy="PreferDualStack")
    if change.get("clusterIPs") == "first":
        change = {"clusterIPs": old["spec"]["clusterIPs"][:1]}
    new = copy.deepcopy(old)
    new["spec"].update(change)
    error = refused(lambda: plugin.admit(Request("UPDATE", "s2").attrs, new, old))
    assert error.message == (
        'Service "s2" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": '
        f"must be 'SingleStack' to release the secondary {what}"
    )


def test_single_stack_keeps_the_primary_and_frees_the_secondary_once_stored(
    cluster: Cluster,
) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s2", ipFamilyPolicy="PreferDualStack")
    primary, secondary = old["spec"]["clusterIPs"]
    new, request = update(plugin, old, ipFamilyPolicy="SingleStack")
    assert fields(new) == ([primary], ["IPv4"], "SingleStack")
    assert held(cluster) == {primary: "s2", secondary: "s2"}  # until the update is stored
    request.succeed()
    assert held(cluster) == {primary: "s2"}


def test_prefer_dual_stack_left_as_it_was_is_not_touched(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s3", ipFamilyPolicy="RequireDualStack", ipFamilies=["IPv6"])
    new, request = update(plugin, old, ipFamilyPolicy="PreferDualStack")
    assert fields(new)[:2] == fields(old)[:2] and not request.done
    # an existing PreferDualStack Service stays single-stack on a cluster made dual-stack
    single = allocator(cluster, V4)
    before = create(single, "s5", ipFamilyPolicy="PreferDualStack")
    after, _ = update(plugin, before, ports=[{"port": 81}])
    assert fields(after) == (before["spec"]["clusterIPs"], ["IPv4"], "PreferDualStack")


def test_turning_external_name_frees_both_addresses_once_stored(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s7", ipFamilyPolicy="PreferDualStack")
    new, request = update(
        plugin, old, type="ExternalName", externalName="x.example", clusterIP=None,
        clusterIPs=None, ipFamilies=None, ipFamilyPolicy=None,
    )  # fmt: skip
    assert "clusterIPs" not in new["spec"] and len(held(cluster)) == 2
    request.succeed()
    assert held(cluster) == {}


def test_a_dry_run_update_frees_nothing(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    old = create(plugin, "s2", ipFamilyPolicy="PreferDualStack")
    new = copy.deepcopy(old)
    new["spec"]["ipFamilyPolicy"] = "SingleStack"
    request = Request("UPDATE", "s2", dry_run=True)
    run(plugin.admit(request.attrs, new, old))
    assert new["spec"]["clusterIPs"] == old["spec"]["clusterIPs"][:1] and not request.done
