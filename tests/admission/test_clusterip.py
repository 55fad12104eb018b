"""Cluster IP allocation over ServiceCIDRs and IPAddresses, and the IP family fields:
the ranges, the static subrange, taking and giving back, families this cluster lacks."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.clusterip import ALLOCATED, MISMATCH, ClusterIPAllocation, Range
from platform_api.admission.interface import Attributes
from platform_api.admission.servicefamilies import init_families
from platform_api.errors import StatusError
from platform_api.registry.serviceips import normalize, prepare_update
from platform_api.storage.interface import ListOptions
from tests.admission.plugin_kit import Cluster, attrs, refused, run

NET = "networking.platform.io"
Obj = dict[str, Any]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    c = Cluster(str(tmp_path / "db"))
    c.create("servicecidrs", cidr("kubernetes", "10.0.0.0/24"), group=NET)
    return c


def cidr(name: str, *cidrs: str, ready: str | None = None) -> Obj:
    """(A create drops the status: ``ready`` is for an update of /status.)"""
    obj: Obj = {"metadata": {"name": name}, "spec": {"cidrs": list(cidrs)}}
    if ready is not None:
        obj["status"] = {"conditions": [{"type": "Ready", "status": ready}]}
    return obj


def service(name: str, ip: str | None = None, **spec: Any) -> Obj:
    body: Obj = {"type": "ClusterIP", "ports": [{"port": 80}], **spec}
    if ip:
        body["clusterIP"] = ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def allocator(cluster: Cluster) -> ClusterIPAllocation:
    addresses, cidrs = cluster.store("ipaddresses", NET), cluster.store("servicecidrs", NET)
    return ClusterIPAllocation(addresses, cidrs, "10.0.0.0/24")


def admit(plugin: ClusterIPAllocation, a: Attributes, obj: Obj, old: Obj | None = None) -> Obj:
    run(plugin.admit(a, obj, old))
    spec: Obj = obj["spec"]
    return spec


def held(cluster: Cluster) -> dict[str, str]:
    items = cluster.store("ipaddresses", NET).list("", ListOptions()).items
    return {s.object["metadata"]["name"]: s.object["spec"]["parentRef"]["name"] for s in items}


@pytest.mark.parametrize(
    ("cidr_text", "first", "size", "static"),
    [
        ("10.0.0.0/24", "10.0.0.1", 254, 16),
        ("10.7.0.0/28", "10.7.0.1", 14, 0),  # 16 addresses: no static part
        ("10.96.0.0/12", "10.96.0.1", 2**20 - 2, 256),
        ("fd00::/112", "fd00::1", 2**16 - 1, 256),  # IPv6 keeps its last address
    ],
)
def test_a_range_leaves_out_network_and_broadcast(
    cidr_text: str, first: str, size: int, static: int
) -> None:
    r = Range.of(cidr_text)
    assert r is not None
    assert (r.address(0), r.size, r.static) == (first, size, static)


def test_short_ipv6_prefixes_make_no_range() -> None:
    assert Range.of("fd00::/48") is None and Range.of("nonsense") is None


def test_a_service_gets_an_address_from_the_upper_part_and_an_ipaddress(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    spec = admit(plugin, attrs("CREATE", "services", "web"), service("web"))
    ip = ipaddress.ip_address(spec["clusterIP"])
    assert spec["clusterIPs"] == [str(ip)] and int(ip) - int(ipaddress.ip_address("10.0.0.0")) > 16
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert held(cluster) == {str(ip): "web"}


def test_an_address_asked_for_is_taken_once(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    admit(plugin, attrs("CREATE", "services", "a"), service("a", "10.0.0.5"))
    error = refused(
        lambda: plugin.admit(attrs("CREATE", "services", "b"), service("b", "10.0.0.5"), None)
    )
    assert error.code == 422 and error.message.endswith(
        f"failed to allocate IP 10.0.0.5: {ALLOCATED}"
    )
    outside = service("c", "10.9.0.5")
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "c"), outside, None))
    assert error.message == (
        'Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.9.0.5"]: '
        f"failed to allocate IP 10.9.0.5: {MISMATCH}"
    )
    broadcast = service("d", "10.0.0.255")
    assert (
        MISMATCH
        in refused(lambda: plugin.admit(attrs("CREATE", "services", "d"), broadcast, None)).message
    )


def test_a_dry_run_writes_nothing_and_shows_the_network_address(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    spec = admit(plugin, attrs("CREATE", "services", "x", dry_run=True), service("x"))
    assert spec["clusterIP"] == "10.0.0.0" and held(cluster) == {}
    admit(plugin, attrs("CREATE", "services", "y", dry_run=True), service("y", "10.0.0.9"))
    assert held(cluster) == {}


def test_a_failed_request_gives_its_address_back(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    undo: list[Any] = []
    a = attrs("CREATE", "services", "web")
    a = Attributes(
        a.operation, a.resource, "", "default", "web", a.user, False, on_failure=undo.append
    )
    admit(plugin, a, service("web", "10.0.0.7"))
    assert held(cluster) == {"10.0.0.7": "web"} and len(undo) == 1
    run(undo[0]())
    assert held(cluster) == {}


def test_a_deleted_service_frees_only_what_points_at_it(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    admit(plugin, attrs("CREATE", "services", "web"), service("web", "10.0.0.7"))
    other = service("other")
    other["metadata"]["namespace"] = "default"
    other["spec"]["clusterIPs"] = ["10.0.0.7"]  # claims it, but the IPAddress is web's
    run(plugin.service_deleted(other))
    assert held(cluster) == {"10.0.0.7": "web"}
    mine = service("web", "10.0.0.7", clusterIPs=["10.0.0.7"])
    mine["metadata"]["namespace"] = "default"
    run(plugin.service_deleted(mine))
    assert held(cluster) == {}


def test_ranges_not_ready_or_going_are_not_used(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    cidrs = cluster.store("servicecidrs", NET)
    for name, net, ready in (("off", "10.8.0.0/28", "False"), ("on", "10.9.0.0/28", "True")):
        cluster.create("servicecidrs", cidr(name, net), group=NET)
        status = cidr(name, net, ready=ready)["status"]

        def with_status(current: Obj | None, status: Obj = status) -> Obj:
            assert current is not None
            return {**current, "status": status}

        run(cidrs.update("", name, with_status, subresource="status"))
    error = refused(
        lambda: plugin.admit(attrs("CREATE", "services", "a"), service("a", "10.8.0.2"), None)
    )
    assert MISMATCH in error.message
    assert (
        admit(plugin, attrs("CREATE", "services", "b"), service("b", "10.9.0.2"))["clusterIP"]
        == "10.9.0.2"
    )


def test_a_full_range_moves_on_then_is_an_internal_error(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path / "db"))
    cluster.create("servicecidrs", cidr("kubernetes", "10.0.0.0/30"), group=NET)  # 2 addresses
    plugin = allocator(cluster)
    got = {admit(plugin, attrs("CREATE", "services", n), service(n))["clusterIP"] for n in "ab"}
    assert got == {"10.0.0.1", "10.0.0.2"}
    error = refused(lambda: plugin.admit(attrs("CREATE", "services", "c"), service("c"), None))
    assert error.code == 500
    assert error.message == (
        'Internal error occurred: failed to allocate a serviceIP for Service "c": range is full'
    )


def test_turning_external_name_into_cluster_ip_allocates(cluster: Cluster) -> None:
    plugin = allocator(cluster)
    old = {"type": "ExternalName", "externalName": "x.example.com", "ports": [{"port": 80}]}
    new = service("web")
    spec = admit(plugin, attrs("UPDATE", "services", "web"), new, {"spec": old})
    assert spec["clusterIP"] in held(cluster)
    again = service("web")  # the same update once more (the store retried): same address
    assert (
        admit(plugin, attrs("UPDATE", "services", "web"), again, {"spec": old})["clusterIP"]
        == spec["clusterIP"]
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"clusterIP": "fd00::5"},
            'spec.clusterIPs[0]: Invalid value: ["fd00::5"]: IPv6 is not configured on this cluster',
        ),
        (
            {"ipFamilies": ["IPv6"]},
            'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
        ),
        (
            {"ipFamilies": ["IPv4", "IPv6"]},
            "spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or "
            "'PreferDualStack' when multiple IP families are specified",
        ),
        (
            {"ipFamilyPolicy": "RequireDualStack"},
            'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
        ),
        (
            {"ipFamilies": ["IPv5"]},
            'spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
        ),
        (
            {"clusterIPs": ["10.0.0.9"]},
            'spec.clusterIPs: Invalid value: ["10.0.0.9"]: must be empty when `clusterIP` is not specified',
        ),
    ],
)
def test_families_this_cluster_lacks_are_refused(spec: Obj, message: str) -> None:
    body = {"type": "ClusterIP", **spec}
    normalize(body, None)
    with pytest.raises(StatusError) as caught:
        init_families(body, None, ["IPv4"], "web")
    assert caught.value.message == f'Service "web" is invalid: {message}'


def test_headless_selectorless_services_are_dual_stack() -> None:
    body: Obj = {"type": "ClusterIP", "clusterIP": "None", "ipFamilies": ["IPv6"]}
    normalize(body, None)
    init_families(body, None, ["IPv4"], "h")
    assert (body["clusterIPs"], body["ipFamilies"], body["ipFamilyPolicy"]) == (
        ["None"],
        ["IPv6", "IPv4"],
        "RequireDualStack",
    )


def test_updates_keep_allocated_values_and_drop_them_for_external_name() -> None:
    old = {
        "type": "ClusterIP",
        "clusterIP": "10.0.0.9",
        "clusterIPs": ["10.0.0.9"],
        "ipFamilies": ["IPv4"],
    }
    new: Obj = {"type": "ClusterIP"}
    prepare_update(new, old)
    assert (new["clusterIP"], new["clusterIPs"]) == ("10.0.0.9", ["10.0.0.9"])
    only_singular = {"type": "ClusterIP", "clusterIP": "10.0.0.8", "clusterIPs": ["10.0.0.9"]}
    prepare_update(only_singular, old)
    assert only_singular["clusterIPs"] == ["10.0.0.8"]  # validation then refuses the change
    external = {**old, "type": "ExternalName", "externalName": "x.example.com"}
    prepare_update(external, old)
    assert (
        "clusterIP" not in external
        and "clusterIPs" not in external
        and "ipFamilies" not in external
    )
