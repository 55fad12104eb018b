"""The etcd store's watch path: its own writes are not decoded again when the watch
brings them back, and a change's previous state is the cached one, not etcd's prev_kv."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.storage import mediatypes
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.kv import KeyValue, prefix_end
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.etcd.watch import WatchEvent, WatchResponse
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    REQUEST_TOO_LARGE,
    UNREADABLE,
    Event,
    StorageError,
    Unreadable,
)
from platform_api.storage.limits import ETCD_TOO_LARGE, txn_size
from tests.storage.etcd_server import EtcdServer, start_etcd

_names = itertools.count()


@pytest.fixture
def key() -> bytes:
    """A key of the test's own: the etcd is shared by the module."""
    return f"/core/configmaps/writes/cm{next(_names)}".encode()


def configmap(**data: str) -> dict[str, Any]:
    meta = {"name": "cm", "namespace": "writes", "uid": "u-1"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


@pytest.fixture
def store(etcd: EtcdServer) -> Iterator[tuple[EtcdStorage, list[Event]]]:
    client = EtcdClient([etcd.endpoint], reactor)
    watch, asked = client.watch, []

    def recorded(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return watch(*args, **kwargs)

    client.watch = recorded  # type: ignore[method-assign]
    with _storage(client) as (storage, events):
        # No prev_kv: the cache has every previous state, which etcd would otherwise read
        # from its backend for every update and delete.
        assert [a.get("prev_kv") for a in asked] == [False]
        yield storage, events


@contextmanager
def _storage(client: EtcdClient) -> Iterator[tuple[EtcdStorage, list[Event]]]:
    events: list[Event] = []
    storage = EtcdStorage(
        client, KeyLayout("/writes", [("", "configmaps")]), reactor, on_commit=events.extend
    )
    storage.load()
    storage.start()
    try:
        yield storage, events
    finally:
        storage.stop()
        client.close()


@pytest.fixture(scope="module")
def kube_sized_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """An etcd with its default request limit, 1.5 MiB, as kube-apiserver's has."""
    server = start_etcd(str(tmp_path_factory.mktemp("etcd")), fsync=False)
    yield server
    server.stop()


@pytest_twisted.ensureDeferred
async def test_own_writes_reach_cache_watchers_and_caller_as_one_value(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    storage, events = store
    created = await storage.create(key, configmap(k="1"))
    assert storage.cache.data[key] is created and events[-1].stored is created
    assert created.object["metadata"]["resourceVersion"] == str(created.revision)

    def change(obj: dict[str, Any] | None, _: object) -> dict[str, Any]:
        assert obj is not None
        return {**obj, "data": {"k": "2"}}

    updated = await storage.guaranteed_update(key, change)
    assert (events[-1].type, events[-1].stored, events[-1].prev) == (MODIFIED, updated, created)
    assert updated.object["data"] == {"k": "2"}
    assert not storage.values.pending  # nothing left behind


@pytest_twisted.ensureDeferred
async def test_another_writers_change_is_decoded_from_etcd(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    storage, events = store
    created = await storage.create(key, configmap(k="1"))
    value = mediatypes.encode(configmap(k="other"), mediatypes.PROTOBUF)
    put = await storage.client.put(storage.layout.etcd_key(key), value)
    await storage.cache.wait_for(put.revision)
    event = events[-1]
    assert event.stored is not None and event.prev is created
    assert event.stored.object["data"] == {"k": "other"}
    assert event.stored.object["metadata"]["resourceVersion"] == str(put.revision)


@pytest_twisted.ensureDeferred
async def test_an_update_the_cache_finds_unchanged_is_judged_on_etcds_state(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    """A cache one write behind etcd (a replica's is, for a moment) must not answer an
    update as unchanged: the update would be lost.  etcd's state decides, as kube's."""
    storage, _ = store
    created = await storage.create(key, configmap(k="1"))
    value = mediatypes.encode(configmap(k="other"), mediatypes.PROTOBUF)
    put = await storage.client.put(storage.layout.etcd_key(key), value)
    await storage.cache.wait_for(put.revision)
    storage.cache.data[key] = created  # not yet heard of the other write

    def ones(obj: dict[str, Any] | None, _: object) -> dict[str, Any]:
        assert obj is not None
        return {**obj, "data": {"k": "1"}}

    written = await storage.guaranteed_update(key, ones)
    assert written.revision > put.revision
    kv = await storage.client.get(storage.layout.etcd_key(key))
    assert kv is not None and kv.mod_revision == written.revision
    assert mediatypes.decode(kv.value)["data"] == {"k": "1"}
    # Unchanged by etcd's state too: nothing is written.
    again = await storage.guaranteed_update(key, ones)
    assert again.revision == written.revision


@pytest_twisted.ensureDeferred
async def test_a_value_that_does_not_decode_is_kept_unreadable(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    """``etcdctl put`` of any bytes: the cache keeps the value, reading it raises what
    decoding failed with, a write over it or a delete fails the same, and the unsafe
    delete removes it with its stand-in as the DELETED event's object."""
    storage, events = store
    put = await storage.client.put(storage.layout.etcd_key(key), b"[1, 2]")
    await storage.cache.wait_for(put.revision)
    held = storage.get(key)
    assert isinstance(held, Unreadable) and events[-1].stored is held
    message = "illegal base64 data at input byte 0"  # kube's storage decoder's last try
    assert (held.error.code, str(held.error), held.data) == (UNREADABLE, message, b"[1, 2]")
    with pytest.raises(StorageError) as raised:
        held.object  # noqa: B018
    assert raised.value is held.error
    with pytest.raises(StorageError) as raised:
        await storage.guaranteed_update(key, lambda obj, _: {**(obj or {}), "data": {}})
    assert raised.value is held.error
    with pytest.raises(StorageError) as raised:
        await storage.delete(key)
    assert raised.value is held.error and storage.get(key) is held
    stand_in = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm"}}
    await storage.delete_corrupt(key, stand_in)
    assert key not in storage.cache.data and events[-1].type == DELETED
    assert events[-1].stored is not None and events[-1].stored.object == stand_in


@pytest_twisted.ensureDeferred
async def test_every_replica_sees_an_unsafe_deletes_stand_in(
    store: tuple[EtcdStorage, list[Event]], key: bytes, etcd: EtcdServer
) -> None:
    """The stand-in goes through etcd in the delete's own transaction: another replica,
    which could not decode the value either, shows its watchers the same DELETED at the
    same revision; nothing is left in etcd, and neither cache holds the stand-in."""
    storage, events = store
    with _storage(EtcdClient([etcd.endpoint], reactor)) as (other, seen):
        put = await storage.client.put(storage.layout.etcd_key(key), b"[1, 2]")
        await storage.cache.wait_for(put.revision)
        await other.cache.wait_for(put.revision)
        assert isinstance(other.get(key), Unreadable)
        stand_in = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm"}}
        await storage.delete_corrupt(key, stand_in)
        revision = events[-1].revision
        await other.cache.wait_for(revision)
        for replica in (events, seen):
            deleted = [e for e in replica if e.key == key][-1]
            assert (deleted.type, deleted.revision) == (DELETED, revision)
            assert deleted.stored is not None and deleted.stored.object == stand_in
        assert key not in other.cache.data
        assert [e.key for e in seen if e.revision >= revision] == [key]
    left = await storage.client.range(storage.layout.root, prefix_end(storage.layout.root))
    assert [kv.key for kv in left.kvs if b"stand-ins" in kv.key] == []


@pytest_twisted.ensureDeferred
async def test_another_writers_delete_carries_the_cached_last_state(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    """The store's etcd watch asks for no prev_kv (etcd would read the previous value
    from its backend for every update and delete): a DELETED event's object is the
    state the cache held."""
    storage, events = store
    created = await storage.create(key, configmap(k="1"))
    deleted = await storage.client.delete(storage.layout.etcd_key(key))
    await storage.cache.wait_for(deleted.revision)
    assert (events[-1].type, events[-1].revision) == (DELETED, deleted.revision)
    assert events[-1].stored is created and events[-1].prev is created
    assert key not in storage.cache.data


def test_changes_of_one_response_chain_their_previous_states(
    store: tuple[EtcdStorage, list[Event]], key: bytes
) -> None:
    """Create, delete and create again in one watch response: each change's previous
    state is the one before it in the response, not the cache's."""
    storage, events = store
    etcd_key = storage.layout.etcd_key(key)
    base = storage.cache.revision
    first = orjson.dumps(configmap(k="1"))
    second = orjson.dumps(configmap(k="2"))
    storage._received(
        WatchResponse(
            base + 3,
            [
                WatchEvent("PUT", KeyValue(etcd_key, first, base + 1, base + 1)),
                WatchEvent("DELETE", KeyValue(etcd_key, b"", 0, base + 2)),
                WatchEvent("PUT", KeyValue(etcd_key, second, base + 3, base + 3)),
            ],
        )
    )
    added, deleted, again = events[-3:]
    assert (added.type, added.prev) == (ADDED, None)
    assert (deleted.type, deleted.prev) == (DELETED, added.stored)
    assert (again.type, again.prev) == (ADDED, None)
    assert storage.cache.data[key] is again.stored


@pytest_twisted.ensureDeferred
async def test_the_size_limit_weighs_the_value_etcd_gets(
    kube_sized_etcd: EtcdServer, key: bytes
) -> None:
    """kube sends a built-in object as Protobuf: one whose JSON is over etcd's 1.5 MiB
    request limit but whose Protobuf fits is stored, as kube stores it; a value over the
    limit is refused with etcd's words and nothing is written."""
    with _storage(EtcdClient([kube_sized_etcd.endpoint], reactor)) as (storage, _):
        await _weigh(storage, key)


async def _weigh(storage: EtcdStorage, key: bytes) -> None:
    quotes = configmap(v='"' * 1_000_000)  # 2 MB as JSON (each quote escaped), 1 MB stored
    assert len(orjson.dumps(quotes)) > 2_000_000
    created = await storage.create(key, quotes)
    assert created.object["data"]["v"] == quotes["data"]["v"]
    other = key + b"-over"
    with pytest.raises(StorageError) as refused:
        await storage.create(other, configmap(v="x" * 1_600_000))
    assert (refused.value.code, str(refused.value)) == (REQUEST_TOO_LARGE, ETCD_TOO_LARGE)
    assert await storage.client.get(storage.layout.etcd_key(other)) is None


@pytest_twisted.ensureDeferred
async def test_etcds_own_request_limit_decides(
    tmp_path_factory: pytest.TempPathFactory, key: bytes
) -> None:
    """The server refuses on its own only what kube's etcd client would not send (2 MiB),
    measuring the key under its own prefix: an etcd whose operator raised
    ``--max-request-bytes`` stores what kube would store there."""
    roomy = start_etcd(str(tmp_path_factory.mktemp("etcd")), fsync=False, max_request_bytes=3 << 20)
    try:
        with _storage(EtcdClient([roomy.endpoint], reactor)) as (storage, _):
            made = await storage.create(key, configmap(v="x" * 1_600_000))
            assert len(made.object["data"]["v"]) == 1_600_000
            big = configmap(v="x" * (2 << 20))
            with pytest.raises(StorageError) as refused:
                await storage.create(key + b"-2", big)
            value = mediatypes.encode(big, mediatypes.PROTOBUF)
            etcd_key = storage.layout.etcd_key(key + b"-2")
            size = txn_size(len(etcd_key), len(value), 0)
            assert (refused.value.code, str(refused.value)) == (
                REQUEST_TOO_LARGE,
                "rpc error: code = ResourceExhausted desc = trying to send message larger than "
                f"max ({size} vs. 2097152)",
            )
            assert await storage.client.get(etcd_key) is None
    finally:
        roomy.stop()
