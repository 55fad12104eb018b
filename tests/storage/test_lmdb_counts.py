"""Object counts kept by LMDB's commits: which prefixes are counted, and what happens
when something other than this release's commit wrote objects (the counts are stale:
reads walk, the next open counts again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lmdb
from twisted.internet.defer import ensureDeferred

from platform_api.storage.interface import ListOptions
from platform_api.storage.lmdb_commit import REV
from platform_api.storage.lmdb_counts import META_COUNTED, countable, prefixes
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.storage.test_lmdb_store import ManualWriter

MI = 2**20


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def test_a_key_counts_under_its_resource_and_its_namespace() -> None:
    assert prefixes(b"/core/configmaps/default/a") == (
        b"/core/configmaps/",
        b"/core/configmaps/default/",
    )
    assert prefixes(b"/core/namespaces/default") == (b"/core/namespaces/",)
    assert prefixes(b"/cm/00001") == ()  # not a registry key: never counted
    assert prefixes(b"") == ()
    assert [countable(p) for p in (b"/core/pods/", b"/core/pods/ns/", b"/", b"/core/")] == [
        True,
        True,
        False,
        False,
    ]
    assert not countable(b"/core/pods/ns/name")  # one key, or the keys it prefixes


def _storage(path: Path) -> tuple[LMDBStorage, ManualWriter]:
    writer = ManualWriter()
    return LMDBStorage(open_environment(str(path), MI), writer), writer


def _create(storage: LMDBStorage, writer: ManualWriter, key: bytes) -> None:
    d = storage.create(key, cm(key.decode().rpartition("/")[2]))
    writer.run_all()
    assert d.called


def _raw_write(env: lmdb.Environment, key: bytes) -> None:
    """An object written as an older release or ``migrate-storage`` writes it: the
    revision moves, the counts do not."""
    with env.begin(write=True) as txn:
        meta, objects = env.open_db(b"meta", txn=txn), env.open_db(b"objects", txn=txn)
        revision = REV.unpack(txn.get(b"rev", db=meta))[0] + 1
        txn.put(key, REV.pack(revision) + b'{"metadata":{"name":"raw"}}', db=objects)
        txn.put(b"rev", REV.pack(revision), db=meta)


def test_counts_cover_cluster_scoped_resources_and_deletes(tmp_path: Path) -> None:
    storage, writer = _storage(tmp_path / "db")
    for name in ("a", "b", "c"):
        _create(storage, writer, b"/core/namespaces/" + name.encode())
    deleted = ensureDeferred(storage.delete(b"/core/namespaces/b"))
    writer.run_all()
    assert deleted.called
    assert storage.count(b"/core/namespaces/") == 2
    chunk = storage.get_list(b"/core/namespaces/", ListOptions(limit=1))
    assert [i.key for i in chunk.items] == [b"/core/namespaces/a"] and chunk.remaining == 1
    assert storage.count(b"/core/pods/") == 0


def test_stale_counts_are_walked_and_counted_again_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "db"
    storage, writer = _storage(path)
    for name in ("a", "b"):
        _create(storage, writer, b"/core/configmaps/ns/" + name.encode())
    _raw_write(storage._env._env, b"/core/configmaps/ns/c")
    # Stale: the count and the first chunk's remainder are walked, so still right.
    assert storage.count(b"/core/configmaps/ns/") == 3
    assert storage.get_list(b"/core/configmaps/ns/", ListOptions(limit=1)).remaining == 2
    # A commit of this release leaves stale counts stale rather than half right.
    _create(storage, writer, b"/core/configmaps/ns/d")
    assert storage.count(b"/core/configmaps/") == 4
    storage._env.close()
    env = open_environment(str(path), MI)  # counts again
    with env.begin() as txn:
        meta = env.open_db(b"meta", txn=txn)
        assert txn.get(META_COUNTED, db=meta) == txn.get(b"rev", db=meta)
        counts = env.open_db(b"counts", txn=txn)
        assert dict(txn.cursor(db=counts)) == {
            b"/core/configmaps/": REV.pack(4),
            b"/core/configmaps/ns/": REV.pack(4),
        }
    env.close()


def test_a_namespace_emptied_leaves_no_count_behind(tmp_path: Path) -> None:
    path = tmp_path / "db"
    storage, writer = _storage(path)
    _create(storage, writer, b"/core/configmaps/gone/a")
    deleted = ensureDeferred(storage.delete(b"/core/configmaps/gone/a"))
    writer.run_all()
    assert deleted.called
    with storage._env.begin() as txn:
        assert list(txn.cursor(db=storage._counts)) == []
