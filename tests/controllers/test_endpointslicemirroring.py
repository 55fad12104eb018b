"""endpointslice-mirroring-controller over real storage, the hub and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers.endpointslicemirroring import (
    CONTROLLER_NAME,
    EndpointSliceMirroring,
)
from platform_api.controllers.endpointsubsets import repack_subsets
from platform_api.storage.interface import ListOptions
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
SERVICES, ENDPOINTS = ("", "v1", "services"), ("", "v1", "endpoints")
SLICES = ("discovery.platform.io", "v1", "endpointslices")
NS = "default"


def service(name: str, selector: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"ports": [{"name": "http", "port": 80}]}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def endpoints(
    name: str, ready: list[str], not_ready: tuple[str, ...] | list[str] = (), **meta: Any
) -> Obj:
    subset: Obj = {"ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [{"ip": ip} for ip in ready]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": ip} for ip in not_ready]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name, **meta},
        "subsets": [subset],
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        stores = self.cluster.stores
        self.start(
            EndpointSliceMirroring(
                stores[ENDPOINTS],
                stores[SERVICES],
                stores[SLICES],
                self.cluster.hub,
                self.cluster.clock,
            )
        )

    def slices(self) -> list[Obj]:
        items = self.cluster.stores[SLICES].list(NS, ListOptions()).items
        return sorted((s.object for s in items), key=lambda s: s["addressType"])

    def put_endpoints(self, obj: Obj) -> None:
        store = self.cluster.stores[ENDPOINTS]

        def replace(existing: Obj | None) -> Obj:
            assert existing is not None
            obj["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
            return obj

        self.cluster.run(store.update(NS, obj["metadata"]["name"], replace))
        self.cluster.settle()


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path))


def test_an_external_service_gets_a_slice(s: Setup) -> None:
    s.create(SERVICES, service("db"), NS)
    ep = endpoints(
        "db",
        ["10.0.0.2", "10.0.0.1"],
        ["10.0.0.3"],
        labels={"team": "a"},
        annotations={"note": "x", "endpoints.kubernetes.io/last-change-trigger-time": "t"},
    )
    made = s.create(ENDPOINTS, ep, NS)
    (slice_,) = s.slices()
    meta = slice_["metadata"]
    assert meta["name"].startswith("db-") and meta["generateName"] == "db-"
    assert meta["labels"] == {
        "team": "a",
        "kubernetes.io/service-name": "db",
        "endpointslice.kubernetes.io/managed-by": CONTROLLER_NAME,
    }
    assert meta["annotations"] == {"note": "x"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "name": "db",
            "uid": made["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert slice_["addressType"] == "IPv4"
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert [(e["addresses"], e["conditions"]) for e in slice_["endpoints"]] == [
        (["10.0.0.1"], {"ready": True}),
        (["10.0.0.2"], {"ready": True}),
        (["10.0.0.3"], {"ready": False}),
    ]


def test_changes_follow_in_the_same_slice_and_families_split(s: Setup) -> None:
    s.create(SERVICES, service("db"), NS)
    s.create(ENDPOINTS, endpoints("db", ["10.0.0.1", "10.0.0.2"]), NS)
    (before,) = s.slices()
    s.put_endpoints(endpoints("db", ["10.0.0.1", "fd00::1"]))
    v4, v6 = s.slices()
    assert v4["metadata"]["name"] == before["metadata"]["name"]
    assert [e["addresses"] for e in v4["endpoints"]] == [["10.0.0.1"]]
    assert (v6["addressType"], v6["endpoints"][0]["addresses"]) == ("IPv6", ["fd00::1"])


def test_a_hand_edited_slice_is_put_back(s: Setup) -> None:
    s.create(SERVICES, service("db"), NS)
    s.create(ENDPOINTS, endpoints("db", ["10.0.0.1"]), NS)
    (slice_,) = s.slices()
    store = s.cluster.stores[SLICES]

    def empty(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["endpoints"] = []
        return existing

    s.cluster.run(store.update(NS, slice_["metadata"]["name"], empty))
    s.cluster.settle()
    assert [e["addresses"] for e in s.slices()[0]["endpoints"]] == [["10.0.0.1"]]
    s.delete(SLICES, slice_["metadata"]["name"], NS)
    (again,) = s.slices()
    assert again["metadata"]["name"] != slice_["metadata"]["name"]


@pytest.mark.parametrize(
    "meta",
    [
        {"labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        {"annotations": {"control-plane.alpha.kubernetes.io/leader": "{}"}},
    ],
)
def test_not_mirrored(s: Setup, meta: Obj) -> None:
    s.create(SERVICES, service("db"), NS)
    s.create(ENDPOINTS, endpoints("db", ["10.0.0.1"], **meta), NS)
    assert s.slices() == []


def test_selector_services_and_missing_services_have_none(s: Setup) -> None:
    s.create(ENDPOINTS, endpoints("db", ["10.0.0.1"]), NS)
    assert s.slices() == []  # no Service yet
    s.create(SERVICES, service("db"), NS)
    assert len(s.slices()) == 1
    store = s.cluster.stores[SERVICES]

    def select(existing: Obj | None) -> Obj:
        assert existing is not None
        existing["spec"]["selector"] = {"app": "db"}
        return existing

    s.cluster.run(store.update(NS, "db", select))
    s.cluster.settle()
    assert s.slices() == []  # the endpointslice controller's now
    s.delete(SERVICES, "db", NS)
    s.create(SERVICES, service("db"), NS)
    assert len(s.slices()) == 1
    s.delete(ENDPOINTS, "db", NS)
    assert s.slices() == []


def test_at_most_1000_addresses_a_subset_ready_first(s: Setup) -> None:
    s.create(SERVICES, service("big"), NS)
    ready = [f"10.0.{i // 250}.{i % 250 + 1}" for i in range(990)]
    not_ready = [f"10.1.{i // 250}.{i % 250 + 1}" for i in range(20)]
    s.create(ENDPOINTS, endpoints("big", ready, not_ready), NS)
    (slice_,) = s.slices()
    conditions = [e["conditions"]["ready"] for e in slice_["endpoints"]]
    assert len(conditions) == 1000 and conditions.count(False) == 10


def test_repack_merges_ports_and_keeps_not_ready() -> None:
    subsets = [
        {
            "addresses": [{"ip": "10.0.0.2"}, {"ip": "10.0.0.1"}],
            "ports": [{"name": "a", "port": 1}],
        },
        {
            "addresses": [{"ip": "10.0.0.1"}],
            "notReadyAddresses": [{"ip": "10.0.0.2"}],
            "ports": [{"name": "b", "port": 2}],
        },
        {
            "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"name": "c", "port": 3}],
        },
    ]
    packed = repack_subsets(subsets)
    assert sorted(packed, key=lambda x: len(x["ports"])) == [
        {
            "addresses": [{"ip": "10.0.0.1"}],
            "notReadyAddresses": [{"ip": "10.0.0.2"}],
            "ports": [{"name": "b", "port": 2}],
        },
        {
            "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"name": "a", "port": 1}, {"name": "c", "port": 3}],
        },
    ]
