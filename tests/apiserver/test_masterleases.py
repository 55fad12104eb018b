"""The API servers' address leases: renewal, expiry and collection of lapsed records."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.masterleases import EXPIRES, MasterLeases
from platform_api.storage.interface import ListOptions, Preconditions, StorageError
from tests.admission.plugin_kit import run
from tests.apiserver.endpointkit import Servers


@pytest.fixture
def servers(tmp_path: Path) -> Servers:
    return Servers(str(tmp_path / "db"))


def test_a_record_without_an_expiry_counts_as_lapsed(servers: Servers) -> None:
    storage = servers.cluster.storage
    run(storage.create(b"/core/masterleases/192.0.2.3", {"metadata": {"name": "192.0.2.3"}}))
    leases = servers.leases()
    run(leases.update("192.0.2.4"))
    assert leases.list_live() == ["192.0.2.4"]
    run(leases.collect())
    assert [
        s.object["metadata"]["name"]
        for s in storage.get_list(b"/core/masterleases/", ListOptions()).items
    ] == ["192.0.2.4"]


def test_a_lease_renewed_while_collected_is_kept(servers: Servers) -> None:
    """The delete of a lapsed record is conditional on the version that lapsed."""
    leases = servers.leases()
    run(leases.update("192.0.2.5"))
    lapsed = servers.cluster.storage.get(b"/core/masterleases/192.0.2.5")
    servers.clock.advance(60)
    run(leases.update("192.0.2.5"))  # renewed after the collector read it
    with pytest.raises(StorageError):
        run(
            servers.cluster.storage.delete(
                lapsed.key, preconditions=Preconditions(resource_version=str(lapsed.revision))
            )
        )
    run(leases.collect())
    renewed = servers.cluster.storage.get(b"/core/masterleases/192.0.2.5").object
    assert float(renewed["metadata"]["annotations"][EXPIRES]) > servers.clock.seconds()
    assert MasterLeases(servers.cluster.storage, servers.clock).list_live() == ["192.0.2.5"]


def test_renewal_keeps_a_record_live_past_its_first_ttl(servers: Servers) -> None:
    leases = servers.leases()
    for _ in range(4):
        run(leases.update("192.0.2.6"))
        servers.clock.advance(10)
    assert leases.list_live() == ["192.0.2.6"]
    servers.clock.advance(6)
    assert leases.list_live() == []
