"""kube's lease and master-count endpoint reconcilers over real stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.endpointreconcilers import (
    NO_LEASES,
    MasterCountReconciler,
    ReconcileError,
)
from platform_api.apiserver.masterleases import TTL
from platform_api.storage.interface import ListOptions
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import PORTS, Servers


@pytest.fixture
def servers(tmp_path: Path) -> Servers:
    return Servers(str(tmp_path / "db"))


def test_the_first_server_creates_the_endpoints_and_their_slice(servers: Servers) -> None:
    run(servers.lease_reconciler().reconcile("kubernetes", "192.0.2.10", PORTS, False))
    endpoints = servers.endpoints()
    assert endpoints is not None
    assert endpoints["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert endpoints["subsets"] == [{"addresses": [{"ip": "192.0.2.10"}], "ports": PORTS}]
    found = servers.slice()
    assert found is not None
    assert found["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert {k: found[k] for k in ("addressType", "endpoints", "ports")} == {
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}],
        "ports": PORTS,
    }


def test_a_pass_that_changes_nothing_writes_only_the_lease(servers: Servers) -> None:
    reconciler = servers.lease_reconciler()
    run(reconciler.reconcile("kubernetes", "192.0.2.10", PORTS, False))
    before = (servers.endpoints() or {})["metadata"]["resourceVersion"]
    slice_before = (servers.slice() or {})["metadata"]["resourceVersion"]
    lease = servers.cluster.storage.get(b"/core/masterleases/192.0.2.10").object
    run(reconciler.reconcile("kubernetes", "192.0.2.10", PORTS, False))
    assert (servers.endpoints() or {})["metadata"]["resourceVersion"] == before
    assert (servers.slice() or {})["metadata"]["resourceVersion"] == slice_before
    renewed = servers.cluster.storage.get(b"/core/masterleases/192.0.2.10").object
    assert renewed["metadata"]["generation"] == lease["metadata"]["generation"] + 1


def test_every_live_server_is_listed_in_address_order(servers: Servers) -> None:
    for ip in ("192.0.2.30", "192.0.2.4", "192.0.2.200"):
        run(servers.lease_reconciler().reconcile("kubernetes", ip, PORTS, False))
    assert servers.ips() == ["192.0.2.200", "192.0.2.30", "192.0.2.4"]  # sorted as strings
    assert servers.slice_ips() == servers.ips()


def test_a_server_that_stops_renewing_is_dropped_after_the_ttl(servers: Servers) -> None:
    a, b = servers.lease_reconciler(), servers.lease_reconciler()
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    run(b.reconcile("kubernetes", "192.0.2.2", PORTS, False))
    servers.clock.advance(TTL - 1)
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    assert servers.ips() == ["192.0.2.1", "192.0.2.2"]  # b's lease is still live
    servers.clock.advance(2)
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    assert servers.ips() == ["192.0.2.1"]
    assert servers.slice_ips() == ["192.0.2.1"]
    assert servers.leases().list_live() == ["192.0.2.1"]
    keys = [
        s.key for s in servers.cluster.storage.get_list(b"/core/masterleases/", ListOptions()).items
    ]
    assert keys == [b"/core/masterleases/192.0.2.1"]  # the lapsed record is deleted


def test_a_stopping_server_takes_itself_out(servers: Servers) -> None:
    a, b = servers.lease_reconciler(), servers.lease_reconciler()
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    run(b.reconcile("kubernetes", "192.0.2.2", PORTS, False))
    b.stop_reconciling()
    assert run(b.remove("kubernetes", "192.0.2.2", PORTS)) is True
    assert servers.ips() == ["192.0.2.1"]
    run(b.reconcile("kubernetes", "192.0.2.2", PORTS, False))  # stopped: no renewal
    assert servers.ips() == ["192.0.2.1"]
    assert run(b.remove("kubernetes", "192.0.2.2", PORTS)) is False  # no record left


def test_the_last_server_leaves_its_address_rather_than_none(servers: Servers) -> None:
    a = servers.lease_reconciler()
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    with pytest.raises(ReconcileError, match=NO_LEASES):
        run(a.remove("kubernetes", "192.0.2.1", PORTS))
    assert servers.ips() == ["192.0.2.1"]


def test_damaged_endpoints_are_made_again(servers: Servers) -> None:
    a = servers.lease_reconciler()
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    endpoints = servers.endpoints() or {}
    endpoints["metadata"]["labels"] = {"team": "x"}
    endpoints["subsets"] = [
        {"addresses": [{"ip": "192.0.2.9"}], "ports": [{"port": 1, "protocol": "TCP"}]},
        {"addresses": [{"ip": "192.0.2.8"}], "ports": [{"port": 2, "protocol": "TCP"}]},
    ]
    run(servers.adapter.update(endpoints))
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    fixed = servers.endpoints() or {}
    assert fixed["metadata"]["labels"] == {
        "team": "x",
        "endpointslice.kubernetes.io/skip-mirror": "true",
    }
    assert fixed["subsets"] == [{"addresses": [{"ip": "192.0.2.1"}], "ports": PORTS}]


def test_ports_are_put_right_only_when_asked(servers: Servers) -> None:
    a = servers.lease_reconciler()
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))
    endpoints = servers.endpoints() or {}
    endpoints["subsets"][0]["ports"] = [{"name": "https", "port": 1, "protocol": "TCP"}]
    run(servers.adapter.update(endpoints))
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, False))  # kube's periodic pass
    assert (servers.endpoints() or {})["subsets"][0]["ports"][0]["port"] == 1
    run(a.reconcile("kubernetes", "192.0.2.1", PORTS, True))
    assert (servers.endpoints() or {})["subsets"][0]["ports"] == PORTS
    assert (servers.slice() or {})["ports"] == PORTS


def test_master_count_adds_its_address_and_trims_past_the_count(servers: Servers) -> None:
    one = MasterCountReconciler(servers.adapter, 2)
    run(one.reconcile("kubernetes", "192.0.2.5", PORTS, False))
    run(one.reconcile("kubernetes", "192.0.2.3", PORTS, False))
    assert servers.ips() == ["192.0.2.3", "192.0.2.5"]
    run(one.reconcile("kubernetes", "192.0.2.4", PORTS, False))
    # 192.0.2.4 is added, then the address after it (192.0.2.5) goes
    assert servers.ips() == ["192.0.2.3", "192.0.2.4"]
    assert servers.slice_ips() == ["192.0.2.3", "192.0.2.4"]
    run(one.remove("kubernetes", "192.0.2.3", PORTS))
    assert servers.ips() == ["192.0.2.4"]


def test_master_count_wraps_round_as_kube_does(servers: Servers) -> None:
    """Past the end, kube's loop removes from the front, and then its own address."""
    many = MasterCountReconciler(servers.adapter, 2)
    for ip in ("192.0.2.1", "192.0.2.2"):
        run(many.reconcile("kubernetes", ip, PORTS, False))
    run(
        MasterCountReconciler(servers.adapter, 1).reconcile("kubernetes", "192.0.2.9", PORTS, False)
    )
    assert servers.ips() == ["192.0.2.2"]
