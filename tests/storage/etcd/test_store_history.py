"""Lists at revisions the watch cache let go: read from etcd, as kube's cacher delegates
them, until etcd itself compacts them away (then 410 Expired)."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.interface import EXPIRED, ListOptions, StorageError, reads_history
from platform_api.storage.view import StorageView
from tests.storage.etcd_server import EtcdServer

CONFIGMAPS = builtin_scheme().lookup("", "v1", "configmaps")
PREFIX = b"/core/configmaps/shop/"


def _configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def _names(items: list[Any]) -> list[str]:
    return [s.object["metadata"]["name"] for s in items]


@pytest_twisted.ensureDeferred
async def test_a_list_the_cache_let_go_is_read_from_etcd_until_compacted(
    etcd: EtcdServer,
) -> None:
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/history", [("", "configmaps")]), reactor)
    storage.load()
    storage.start()
    store = Store(CONFIGMAPS, storage)
    try:
        for name in ("a", "b", "c"):
            await store.create("shop", _configmap(name))
        then = storage.current_revision()
        await store.create("shop", _configmap("d"))
        await storage.delete(PREFIX + b"a")
        await storage.compact(-1)  # the window passed: lists before it expire in the cache
        assert storage.cache.list_floor > then

        with pytest.raises(StorageError) as let_go:
            storage.get_list(PREFIX, ListOptions(then))
        assert let_go.value.code == EXPIRED
        assert storage.compacted_revision() == 0  # etcd has every revision still

        whole = await store.read_list("shop", ListOptions(then))
        assert (_names(whole.items), whole.revision) == (["a", "b", "c"], then)
        chunk = await store.read_list("shop", ListOptions(then, PREFIX + b"a", limit=1))
        assert (_names(chunk.items), chunk.continue_key, chunk.remaining) == (
            ["b"],
            PREFIX + b"b",
            1,
        )
        # A served version's view reads the same history.
        view = StorageView(storage, lambda obj: None, lambda obj: obj)
        assert reads_history(view) is view
        seen = await Store(CONFIGMAPS, view).read_list("shop", ListOptions(then))
        assert _names(seen.items) == ["a", "b", "c"]
        # The current state is still the cache's.
        now = await store.read_list("shop", ListOptions())
        assert _names(now.items) == ["b", "c", "d"]

        await storage.mark_compaction()
        compacted_to = await storage.mark_compaction()  # compacts etcd to the first mark
        assert storage.compacted_revision() == compacted_to > then
        with pytest.raises(StatusError) as expired:
            await store.read_list("shop", ListOptions(then))
        assert (expired.value.code, expired.value.reason, expired.value.message) == (
            410,
            "Expired",
            "The resourceVersion for the provided list is too old.",
        )
    finally:
        storage.stop()
        client.close()
