"""The EndpointSlice the API server derives from its Endpoints, and its upkeep."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.endpointsadapter import slice_from_endpoints
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import PORTS, Servers


def endpoints(*subsets: dict[str, object]) -> dict[str, object]:
    meta = {"name": "kubernetes", "namespace": "default"}
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta, "subsets": list(subsets)}


def test_the_slice_takes_the_first_subset_ready_addresses_first() -> None:
    derived = slice_from_endpoints(
        endpoints(
            {
                "addresses": [{"ip": "10.0.0.2", "nodeName": "n1"}],
                "notReadyAddresses": [{"ip": "10.0.0.1"}],
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "h2"}],
            },
            {"addresses": [{"ip": "10.0.0.3"}]},
        )
    )
    assert derived == {
        "apiVersion": "discovery.platform.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": "kubernetes"},
        },
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": ["10.0.0.2"], "conditions": {"ready": True}, "nodeName": "n1"},
            {"addresses": ["10.0.0.1"], "conditions": {"ready": False}},
        ],
        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "h2"}],
    }


@pytest.mark.parametrize(
    ("ips", "family"),
    [(["fd00::2"], "IPv6"), (["fd00::2", "10.0.0.1"], "IPv4"), ([], "IPv4")],
)
def test_the_slice_is_ipv6_only_when_every_address_is(ips: list[str], family: str) -> None:
    subset = {"addresses": [{"ip": ip} for ip in ips]}
    assert slice_from_endpoints(endpoints(subset))["addressType"] == family


def test_no_subsets_give_an_empty_slice() -> None:
    derived = slice_from_endpoints(endpoints())
    assert derived["endpoints"] == []
    assert "ports" not in derived


@pytest.fixture
def servers(tmp_path: Path) -> Servers:
    return Servers(str(tmp_path / "db"))


def test_an_edited_slice_is_put_back(servers: Servers) -> None:
    run(servers.lease_reconciler().reconcile("kubernetes", "192.0.2.1", PORTS, False))
    store = servers.adapter.slices
    edited = store.get("default", "kubernetes").copy()
    edited["endpoints"] = [{"addresses": ["192.0.2.77"]}]
    edited["metadata"]["labels"]["extra"] = "x"
    run(store.update("default", "kubernetes", lambda _: edited))
    run(servers.lease_reconciler().reconcile("kubernetes", "192.0.2.1", PORTS, False))
    fixed = servers.slice() or {}
    assert servers.slice_ips() == ["192.0.2.1"]
    assert fixed["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}


def test_a_new_address_type_means_a_new_slice(servers: Servers) -> None:
    run(servers.lease_reconciler().reconcile("kubernetes", "192.0.2.1", PORTS, False))
    first = (servers.slice() or {})["metadata"]["uid"]
    run(servers.leases().remove("192.0.2.1"))
    six = servers.lease_reconciler()
    run(six.reconcile("kubernetes", "fd00::9", PORTS, False))
    replaced = servers.slice() or {}
    assert replaced["addressType"] == "IPv6"
    assert replaced["metadata"]["uid"] != first
    assert servers.slice_ips() == ["fd00::9"]
