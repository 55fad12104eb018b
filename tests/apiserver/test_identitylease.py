"""The API server's identity Lease, renewed as client-go's lease controller renews it,
and the collector of lapsed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.identity import server_id
from platform_api.apiserver.identitylease import (
    IDENTITY_LABEL,
    IdentityLease,
    IdentityLeaseCollector,
    expired,
    micro_time,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import Servers

NS = "platform-system"
LABELS = {IDENTITY_LABEL: "kube-apiserver", "kubernetes.io/hostname": "vm"}


def test_the_identity_is_kubes_hash_of_host_and_component() -> None:
    # what kube-apiserver v1.36 named its Lease on a host called "vm"
    assert server_id("vm") == "apiserver-wlv32tlttr4jl3gtroqexyxapa"
    assert server_id("vm2") != server_id("vm")


def test_times_are_micro_times_in_utc() -> None:
    assert micro_time(1_800_000_000.25) == "2027-01-15T08:00:00.250000Z"


@pytest.fixture
def servers(tmp_path: Path) -> Servers:
    return Servers(str(tmp_path / "db"))


def leases(servers: Servers) -> Store:
    return servers.cluster.store("leases", "coordination.platform.io")


def lease(servers: Servers, holder: str = "me_1", peer: str = "192.0.2.2:6443") -> IdentityLease:
    annotations = {"kubernetes.io/peer-advertise-address": peer} if peer else {}
    return IdentityLease(
        leases(servers), NS, "apiserver-x", holder, LABELS, annotations, servers.clock
    )


def current(servers: Servers, name: str = "apiserver-x") -> dict:
    found: dict = leases(servers).get(NS, name).object
    return found


def test_the_first_pass_creates_the_lease(servers: Servers) -> None:
    run(lease(servers).sync())
    made = current(servers)
    assert made["metadata"]["labels"] == LABELS
    assert made["metadata"]["annotations"] == {
        "kubernetes.io/peer-advertise-address": "192.0.2.2:6443"
    }
    assert made["spec"] == {
        "holderIdentity": "me_1",
        "leaseDurationSeconds": 3600,
        "renewTime": micro_time(servers.clock.seconds()),
    }


def test_renewals_write_over_the_last_lease_and_keep_the_holder(servers: Servers) -> None:
    run(lease(servers, holder="old_0").sync())  # a previous run of this server
    again = lease(servers, holder="new_1")
    servers.clock.advance(10)
    run(again.sync())
    renewed = current(servers)
    assert renewed["spec"]["holderIdentity"] == "old_0"  # client-go copies the stored Lease
    assert renewed["spec"]["renewTime"] == micro_time(servers.clock.seconds())
    version = renewed["metadata"]["resourceVersion"]
    servers.clock.advance(10)
    run(again.sync())
    assert int(current(servers)["metadata"]["resourceVersion"]) > int(version)


def test_a_conflict_reads_the_lease_again(servers: Servers) -> None:
    mine = lease(servers)
    run(mine.sync())
    other = current(servers)
    other = {**other, "metadata": {**other["metadata"], "labels": {**LABELS, "extra": "y"}}}
    run(leases(servers).update(NS, "apiserver-x", lambda _: other))
    servers.clock.advance(10)
    run(mine.sync())  # its last write is stale now: 409, then a fresh read
    renewed = current(servers)
    assert renewed["metadata"]["labels"]["extra"] == "y"
    assert renewed["spec"]["renewTime"] == micro_time(servers.clock.seconds())


def test_a_deleted_lease_is_made_again(servers: Servers) -> None:
    mine = lease(servers, peer="")
    run(mine.sync())
    run(leases(servers).delete(NS, "apiserver-x"))
    servers.clock.advance(10)
    run(mine.sync())
    assert "annotations" not in current(servers)["metadata"]


@pytest.mark.parametrize(
    ("spec", "lapsed"),
    [
        ({"renewTime": "2027-01-15T07:00:00.000000Z", "leaseDurationSeconds": 3600}, False),
        ({"renewTime": "2027-01-15T06:59:59.000000Z", "leaseDurationSeconds": 3600}, True),
        ({"leaseDurationSeconds": 3600}, True),
        ({"renewTime": "2027-01-15T07:59:00.000000Z"}, True),
    ],
)
def test_a_lease_lapses_after_its_duration(spec: dict, lapsed: bool) -> None:
    assert expired({"spec": spec}, 1_800_000_000.0) is lapsed


def test_the_collector_deletes_only_lapsed_identity_leases(servers: Servers) -> None:
    store = leases(servers)
    old = micro_time(servers.clock.seconds() - 4000)
    fresh = micro_time(servers.clock.seconds())
    for name, labels, renewed in (
        ("apiserver-gone", LABELS, old),
        ("apiserver-alive", LABELS, fresh),
        ("some-election", {}, old),  # not an identity Lease: not the collector's
    ):
        obj = {
            "apiVersion": "coordination.platform.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "labels": labels},
            "spec": {"renewTime": renewed, "leaseDurationSeconds": 3600},
        }
        run(store.create(NS, obj))
    run(IdentityLeaseCollector(store, NS, servers.clock).collect())
    left = [s.object["metadata"]["name"] for s in store.list(NS, ListOptions()).items]
    assert left == ["apiserver-alive", "some-election"]
