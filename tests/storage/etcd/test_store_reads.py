"""The etcd store's consistent reads: shared quorum reads, never an older revision."""

from __future__ import annotations

from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from tests.storage.etcd_server import EtcdServer


@pytest_twisted.ensureDeferred
async def test_readers_share_quorum_reads(etcd: EtcdServer) -> None:
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/shared", [("", "configmaps")]), reactor)
    calls: list[int] = []
    real_range = client.range

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await real_range(*args, **kwargs)

    client.range = counted  # type: ignore[method-assign]
    try:
        written = await client.put(b"/shared/configmaps/ns/a", b"{}")
        revisions = await gatherResults([storage.consistent_revision() for _ in range(20)])
        assert all(r >= written.revision for r in revisions)
        assert len(calls) == 2  # the first reader's, then one for the 19 who came after
        later = await client.put(b"/shared/configmaps/ns/b", b"{}")
        assert await storage.consistent_revision() >= later.revision
    finally:
        client.close()
