"""A replica whose watch cache has yet to hear of another's write: kube's consistent list
falls back to etcd once its cache did not catch up in time (a watch has nothing to fall
back on), and its gets, the writes that find nothing cached and the token checks that
miss in their listers read etcd."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import ensureDeferred

from platform_api import errors
from platform_api.apiserver.authn import core_lookup, live_lookup
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


@pytest_twisted.ensureDeferred
async def test_a_write_finds_in_etcd_what_the_cache_has_yet_to_hear_of(
    replicas: tuple[EtcdStorage, EtcdStorage],
) -> None:
    """An update or delete through a replica whose cache lacks the object (just created
    through the other) reads it from etcd, as kube's do where the cache has nothing,
    rather than answering 404."""
    writer, behind = replicas
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store = Store(rt, behind)
    for name in ("updated", "deleted"):
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        await writer.create(store.named_key("ns", name), obj)

    async def step(current: dict[str, Any], stored: Any) -> dict[str, Any]:
        return {**current, "data": {"k": "v"}}

    updated = ensureDeferred(behind.guaranteed_update(store.named_key("ns", "updated"), step))
    found = await store.get_or_fetch("ns", "deleted")
    assert found.object["metadata"]["name"] == "deleted"
    deleted = ensureDeferred(store.delete("ns", "deleted"))
    behind.start()  # the writes wait for this replica's cache to have them
    assert (await updated).object["data"] == {"k": "v"}
    assert (await deleted)[1] is True


@pytest_twisted.ensureDeferred
async def test_token_checks_find_what_the_cache_has_yet_to_hear_of(
    replicas: tuple[EtcdStorage, EtcdStorage],
) -> None:
    """The service-account token checks' lookup: the cache, else etcd (kube's token getter
    falls back from its listers to a GET); the bootstrap tokens' reads the cache alone."""
    writer, behind = replicas
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store = Store(rt, behind)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "looked-up"}}
    await writer.create(store.named_key("ns", "looked-up"), obj)
    stores = {("", "v1", "configmaps"): store}
    assert core_lookup(stores, "configmaps")("ns", "looked-up") is None
    found = await live_lookup(stores, "configmaps")("ns", "looked-up")
    assert found["metadata"]["name"] == "looked-up"
    assert await live_lookup(stores, "configmaps")("ns", "absent") is None


@pytest_twisted.ensureDeferred
async def test_a_dry_run_finds_in_etcd_what_the_cache_has_yet_to_hear_of(
    replicas: tuple[EtcdStorage, EtcdStorage],
) -> None:
    """A dry-run create of a name another replica just took is refused as kube's is (its
    dry run reads etcd where its cache has nothing); a dry-run update sees the object."""
    writer, behind = replicas
    rt = builtin_scheme().lookup("", "v1", "configmaps")
    store = Store(rt, behind)
    meta = {
        "name": "taken",
        "namespace": "ns",
        "uid": "u-1",
        "creationTimestamp": "2026-12-05T00:00:00Z",
    }
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    await writer.create(store.named_key("ns", "taken"), copy.deepcopy(obj))
    with pytest.raises(errors.StatusError) as refused:
        await store.create("ns", copy.deepcopy(obj), dry_run=True)
    assert (refused.value.code, refused.value.reason) == (409, "AlreadyExists")

    def labelled(current: dict[str, Any] | None) -> dict[str, Any]:
        assert current is not None  # the object as etcd has it
        return {**current, "metadata": {**current["metadata"], "labels": {"k": "v"}}}

    stored, created = await store.update("ns", "taken", labelled, dry_run=True)
    assert not created and stored.object["metadata"]["labels"] == {"k": "v"}
