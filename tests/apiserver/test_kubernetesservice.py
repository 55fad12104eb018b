"""The kubernetes-service controller: the Service kept, the Endpoints reconciled every
interval, a stale record removed at start, the server's address removed at stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver import endpointoptions
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.kubernetesservice import INTERVAL, KubernetesService, build_reconciler
from platform_api.apiserver.masterleases import PREFIX
from platform_api.storage.interface import ListOptions
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import Servers


@pytest.fixture
def servers(tmp_path: Path) -> Servers:
    return Servers(str(tmp_path / "db"))


def controller(
    servers: Servers, ip: str = "192.0.2.7", reconciler: str = "lease"
) -> KubernetesService:
    cfg = ServerConfig()
    cfg.secure_port = 7443
    cfg.endpoints.advertise_address = ip
    cfg.endpoints.reconciler = reconciler
    stores = servers.cluster.stores
    built = build_reconciler(cfg, stores, servers.cluster.storage, servers.clock)
    return KubernetesService(cfg, stores, built, servers.clock)


def service_exists(servers: Servers) -> bool:
    return servers.cluster.store("services").list("default", ListOptions()).items != []


def test_start_writes_the_service_and_endpoints_at_once(servers: Servers) -> None:
    run(controller(servers).start())
    assert service_exists(servers)
    assert servers.ips() == ["192.0.2.7"]
    ports = (servers.endpoints() or {})["subsets"][0]["ports"]
    assert ports == [{"name": "https", "port": 7443, "protocol": "TCP"}]


def test_a_deleted_service_and_endpoints_come_back_next_interval(servers: Servers) -> None:
    run(controller(servers).start())
    run(servers.cluster.store("services").delete("default", "kubernetes"))
    run(servers.cluster.store("endpoints").delete("default", "kubernetes"))
    servers.clock.advance(INTERVAL - 1)
    assert not service_exists(servers)
    servers.clock.advance(1)
    assert service_exists(servers)
    assert servers.ips() == ["192.0.2.7"]


def test_stop_takes_the_address_out_and_ends_the_passes(servers: Servers) -> None:
    a, b = controller(servers, "192.0.2.1"), controller(servers, "192.0.2.2")
    run(a.start())
    run(b.start())
    assert servers.ips() == ["192.0.2.1", "192.0.2.2"]
    run(b.stop())
    assert servers.ips() == ["192.0.2.1"]
    servers.clock.advance(INTERVAL)
    assert servers.ips() == ["192.0.2.1"]  # b renews nothing any more


def test_start_after_a_crash_removes_the_stale_record_first(servers: Servers) -> None:
    a, crashed = controller(servers, "192.0.2.1"), controller(servers, "192.0.2.2")
    run(a.start())
    run(crashed.start())
    again = controller(servers, "192.0.2.2")
    removed: list[str] = []
    original = again.reconciler.remove  # type: ignore[union-attr]

    async def remove(*args: object) -> bool:
        had = await original(*args)  # type: ignore[arg-type]
        removed.append(str(had))
        return had

    again.reconciler.remove = remove  # type: ignore[union-attr,method-assign]
    run(again.start())
    assert removed == ["True"]
    assert servers.ips() == ["192.0.2.1", "192.0.2.2"]


def test_reconciler_none_keeps_the_service_only(servers: Servers) -> None:
    run(controller(servers, reconciler="none").start())
    assert service_exists(servers)
    assert servers.endpoints() is None
    assert servers.cluster.storage.get_list(PREFIX, ListOptions()).items == []


def test_no_address_to_advertise_means_no_endpoints(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(endpointoptions, "_default_route_source", lambda version: None)
    monkeypatch.setattr(endpointoptions, "_host_addresses", lambda version: [])
    kept = controller(servers, ip="")
    assert kept.ip is None and kept.reconciler is None
    run(kept.start())
    run(kept.stop())
    assert service_exists(servers)
    assert servers.endpoints() is None
