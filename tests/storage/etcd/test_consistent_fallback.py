"""A consistent read whose watch cache has not caught up in time: kube's consistent list
falls back to etcd (and its gets read etcd anyway); a watch has nothing to fall back on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api import errors
from platform_api.apiserver.watchcachemetrics import READ_WAIT
from platform_api.endpoints.scope import Handlers
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.interface import ListOptions
from tests.storage.etcd_server import EtcdServer

LAYOUT = KeyLayout("/fallback", [("", "configmaps")])


@pytest.fixture
def replicas(etcd: EtcdServer) -> Iterator[tuple[EtcdStorage, EtcdStorage]]:
    """A replica that writes, and one whose cache follows no watch: it stays behind."""
    clients = [EtcdClient([etcd.endpoint], reactor) for _ in range(2)]
    writer, behind = (EtcdStorage(client, LAYOUT, reactor) for client in clients)
    writer.load()
    writer.start()
    behind.load()
    # As on an etcd whose progress notifications can be trusted (3.5.13+): the cache
    # serves consistent reads once it has etcd's revision.
    behind.reads_through = False
    try:
        yield writer, behind
    finally:
        for storage in (writer, behind):
            storage.stop()
        for client in clients:
            client.close()


def _handlers(storage: EtcdStorage) -> Handlers:
    unused: Any = None  # what a consistent read does not touch
    return Handlers(
        builtin_scheme(), storage, {}, unused, unused, unused, reactor, too_large_rv_wait=0.2
    )


def _waits() -> float:
    row = READ_WAIT.values.get(("", "configmaps"))
    return sum(row[:-1]) if row else 0


@pytest_twisted.ensureDeferred
async def test_a_consistent_read_from_a_cache_that_lags_falls_back_to_etcd(
    replicas: tuple[EtcdStorage, EtcdStorage],
) -> None:
    writer, behind = replicas
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store, handlers = Store(rt, behind), _handlers(behind)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}
    created = await writer.create(store.named_key("ns", "a"), obj)
    waits, cached = _waits(), behind.current_revision()

    # A watch (no fallback) gets kube's 504; a list or a get reads etcd instead.
    with pytest.raises(errors.StatusError) as refused:
        await handlers.consistent_read(store.prefix)
    assert refused.value.code == 504 and refused.value.reason == "Timeout"
    assert refused.value.message == (
        f"Timeout: Too large resource version: {created.revision}, current: {cached}"
    )
    assert await handlers.consistent_read(store.prefix, fallback=True) is False
    listed = await store.read_list("ns", ListOptions(), consistent=True, stale=True)
    assert [s.object["metadata"]["name"] for s in listed.items] == ["a"]
    got = await store.read("ns", "a", consistent=True, stale=True)
    assert got.object["metadata"]["name"] == "a"
    assert _waits() == waits + 2  # each wait observed, though it ran out

    # Once the cache has the revision, it serves the read itself, and nobody waited.
    behind.start()
    behind.reads_through = False
    await behind.wait_for_revision(writer.current_revision())
    assert await handlers.consistent_read(store.prefix, fallback=True) is True
    assert _waits() == waits + 2


@pytest_twisted.ensureDeferred
async def test_what_a_request_names_is_looked_up_as_of_now(
    replicas: tuple[EtcdStorage, EtcdStorage],
) -> None:
    """``Handlers.current``, kube's handlers' get of the object a request names (a token's
    account, a pod to evict): found though this replica's cache has yet to hear of it,
    from etcd at once where the cache cannot prove itself current (etcd < 3.5.13), else
    once the cache gave up waiting."""
    writer, behind = replicas
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store, handlers = Store(rt, behind), _handlers(behind)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ns"}}
    await writer.create(store.named_key("ns", "b"), obj)
    with pytest.raises(errors.StatusError):
        store.get("ns", "b")  # what the cache has
    for trusted in (False, True):
        behind.reads_through = not trusted
        found = await handlers.current(store, "ns", "b")
        assert found.object["metadata"]["name"] == "b"
