"""The LMDB data format: a new environment records it; format 1 (NUL-parted keys) is
upgraded in place, in steps, idempotently; a newer format is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lmdb
import pytest
from twisted.internet.defer import ensureDeferred

from platform_api.storage import lmdb_format
from platform_api.storage.interface import ADDED, DELETED, MODIFIED, ListOptions
from platform_api.storage.lmdb_commit import LOG_HEADER, REV
from platform_api.storage.lmdb_counts import META_COUNTED
from platform_api.storage.lmdb_format import FORMAT, META_FORMAT, data_format, upgrade
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.storage.test_lmdb_store import ManualWriter

MI = 2**20


def cm(name: str, size: int = 8) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": name}, "data": {"x": "y" * size}}


def downgrade(path: str) -> None:
    """Turn a data directory back into format 1, as releases before formats wrote it:
    NUL between namespace and name, in the objects' keys and the change log's records,
    and no format recorded.  (The e2e upgrade test starts a server on such a copy.)"""
    env = lmdb.open(path, max_dbs=4, subdir=True)
    try:
        objects, history, meta = (env.open_db(n) for n in (b"objects", b"log", b"meta"))
        with env.begin(write=True) as txn:
            for key, value in list(txn.cursor(db=objects)):
                parts = key.split(b"/", 4)
                if len(parts) == 5:
                    txn.delete(key, db=objects)
                    txn.put(b"/".join(parts[:4]) + b"\x00" + parts[4], value, db=objects)
            for revision, record in list(txn.cursor(db=history)):
                start = LOG_HEADER.size
                end = start + LOG_HEADER.unpack_from(record)[2]
                parts = record[start:end].split(b"/", 4)
                if len(parts) == 5:
                    key = b"/".join(parts[:4]) + b"\x00" + parts[4]
                    txn.put(revision, record[:start] + key + record[end:], db=history)
            txn.delete(META_FORMAT, db=meta)
            txn.delete(META_COUNTED, db=meta)  # those releases kept no counts either
            txn.drop(env.open_db(b"counts", txn=txn), delete=False)
    finally:
        env.close()


def populated(path: str, names: list[tuple[str, str]]) -> None:
    """Objects written (and one updated, one deleted) by this release, then downgraded."""
    writer = ManualWriter()
    env = open_environment(path, MI)
    storage = LMDBStorage(env, writer)
    for ns, name in names:
        storage.create(f"/core/configmaps/{ns}/{name}".encode(), cm(name))
        writer.run_all()
    first = f"/core/configmaps/{names[0][0]}/{names[0][1]}".encode()
    ensureDeferred(storage.guaranteed_update(first, lambda obj, _: {**obj, "data": {"x": "new"}}))
    writer.run_all()
    ensureDeferred(storage.delete(f"/core/configmaps/{names[-1][0]}/{names[-1][1]}".encode()))
    writer.run_all()
    env.close()
    downgrade(path)


def raw_keys(path: str) -> list[bytes]:
    env = lmdb.open(path, max_dbs=4, subdir=True, readonly=True)
    try:
        with env.begin() as txn:
            return [bytes(k) for k, _ in txn.cursor(db=env.open_db(b"objects", txn=txn))]
    finally:
        env.close()


NAMES = [("a", "x"), ("a-b", "y"), ("ab", "z"), ("a", "w"), ("b", "gone")]


def test_a_new_environment_records_the_format(tmp_path: Path) -> None:
    env = open_environment(str(tmp_path / "db"), MI)
    assert data_format(env) == FORMAT == 2
    env.close()


def test_format_1_is_upgraded_in_place(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    populated(path, NAMES)
    assert all(b"\x00" in k for k in raw_keys(path))
    env = open_environment(path, MI)
    assert data_format(env) == FORMAT
    storage = LMDBStorage(env, ManualWriter())
    listed = storage.get_list(b"/core/configmaps/", ListOptions()).items
    # kube's order across namespaces: "a-b/" before "a/" ('-' sorts before '/').
    assert [s.key for s in listed] == [
        b"/core/configmaps/a-b/y",
        b"/core/configmaps/a/w",
        b"/core/configmaps/a/x",
        b"/core/configmaps/ab/z",
    ]
    with env.begin() as txn:  # counted at the open, not walked at each count
        meta = env.open_db(b"meta", txn=txn)
        assert txn.get(META_COUNTED, db=meta) == txn.get(b"rev", db=meta)
    assert [storage.count(p) for p in (b"/core/configmaps/", b"/core/configmaps/a/")] == [4, 2]
    old, new = {"x": "y" * 8}, {"x": "new"}
    assert [s.object["data"] for s in listed] == [old, old, new, old]
    assert storage.get(b"/core/configmaps/a/x").revision == 6
    history = [(e.type, e.key) for e in storage.events_since(0)]
    assert history == [
        (ADDED, b"/core/configmaps/a/x"),
        (ADDED, b"/core/configmaps/a-b/y"),
        (ADDED, b"/core/configmaps/ab/z"),
        (ADDED, b"/core/configmaps/a/w"),
        (ADDED, b"/core/configmaps/b/gone"),
        (MODIFIED, b"/core/configmaps/a/x"),
        (DELETED, b"/core/configmaps/b/gone"),
    ]
    deleted = storage.events_since(6)[0]
    assert deleted.prev is not None and deleted.prev.key == b"/core/configmaps/b/gone"
    env.close()


def test_an_upgrade_cut_short_is_finished_by_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps of 2: killed after the first (here: a failing third step), the data holds
    both kinds of keys and no format; the next open finishes the rewrite."""
    path = str(tmp_path / "db")
    populated(path, [(f"n{i}", f"c{i}") for i in range(7)])
    monkeypatch.setattr(lmdb_format, "STEP", 2)
    steps = 0
    real = lmdb_format._rekey_objects

    def dies_on_the_second(txn: Any, db: Any, after: bytes) -> Any:
        nonlocal steps
        steps += 1
        if steps == 2:
            raise KeyboardInterrupt  # as a kill: this transaction is aborted
        return real(txn, db, after)

    monkeypatch.setattr(lmdb_format, "_rekey_objects", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        open_environment(path, MI)
    keys = raw_keys(path)
    assert sum(b"\x00" in k for k in keys) == 4 and len(keys) == 6
    monkeypatch.setattr(lmdb_format, "_rekey_objects", real)
    env = open_environment(path, MI)
    assert data_format(env) == FORMAT
    env.close()
    assert raw_keys(path) == sorted(f"/core/configmaps/n{i}/c{i}".encode() for i in range(6))


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    open_environment(path, MI).close()
    env = lmdb.open(path, max_dbs=4, subdir=True)
    with env.begin(write=True) as txn:
        txn.put(META_FORMAT, REV.pack(FORMAT + 1), db=env.open_db(b"meta", txn=txn))
    with pytest.raises(RuntimeError, match=r"holds data format 3; this release reads format 2"):
        upgrade(env)
    env.close()


def test_an_upgrade_that_needs_room_grows_the_map_to_the_ceiling(tmp_path: Path) -> None:
    """Rewriting keys copies the pages they are on: a nearly full map grows (up to the
    ceiling) rather than failing the start."""
    path = str(tmp_path / "db")
    populated(path, [(f"n{i:03d}", f"c{i}") for i in range(300)])
    env = lmdb.open(path, max_dbs=4, subdir=True)
    used = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
    env.close()
    env = open_environment(path, used, ceiling=64 * MI)
    assert data_format(env) == FORMAT
    assert env.info()["map_size"] > used
    env.close()


def test_a_change_record_too_short_to_read_is_left_as_it_is(tmp_path: Path) -> None:
    """The upgrade rewrites what it can read; a damaged record is the change log's reader's
    problem, as before, not a reason to refuse to start."""
    path = str(tmp_path / "db")
    populated(path, NAMES)
    env = lmdb.open(path, max_dbs=4, subdir=True)
    with env.begin(write=True) as txn:
        txn.put(REV.pack(99), b"\x01short", db=env.open_db(b"log", txn=txn))
    env.close()
    env = open_environment(path, MI)
    assert data_format(env) == FORMAT
    with env.begin() as txn:
        assert txn.get(REV.pack(99), db=env.open_db(b"log", txn=txn)) == b"\x01short"
    env.close()
