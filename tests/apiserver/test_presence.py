"""What every API server runs itself: here, kube's system-namespaces controller."""

from __future__ import annotations

from pathlib import Path

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.presence import NAMESPACES_INTERVAL, Presence
from platform_api.scheme.namespaces import system_namespaces
from platform_api.storage.interface import ListOptions
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import Servers


def names(servers: Servers) -> list[str]:
    found = servers.cluster.store("namespaces").list("", ListOptions()).items
    return sorted(s.object["metadata"]["name"] for s in found)


def test_a_deleted_system_namespace_is_made_again_within_a_minute(tmp_path: Path) -> None:
    servers = Servers(str(tmp_path / "db"))
    cfg = ServerConfig()
    cfg.endpoints.advertise_address = "192.0.2.9"
    presence = Presence(cfg, servers.cluster.stores, servers.cluster.storage, servers.clock)
    run(presence.start())
    store = servers.cluster.store("namespaces")
    for name in system_namespaces(False):
        run(store.create("", {"metadata": {"name": name}}))
    assert names(servers) == sorted(system_namespaces(False))
    # gone for good, as once the namespace controller has emptied and finalized it
    run(servers.cluster.storage.delete(store.key("", "platform-node-lease")))
    servers.clock.advance(NAMESPACES_INTERVAL - 1)
    assert "platform-node-lease" not in names(servers)
    servers.clock.advance(1)
    assert names(servers) == sorted(system_namespaces(False))
    run(presence.stop())
    run(servers.cluster.storage.delete(store.key("", "platform-node-lease")))
    servers.clock.advance(NAMESPACES_INTERVAL)
    assert "platform-node-lease" not in names(servers)  # stopped with the server
