"""LMDBStorage when the map or the disk is full: growth, the quota, per-op retry, remaps."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import lmdb
import pytest
from twisted.internet.defer import Deferred, ensureDeferred

from platform_api.storage.interface import NO_SPACE, ListOptions, StorageError
from platform_api.storage.lmdb_space import format_size, reserve_for
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.storage.test_lmdb_store import ManualWriter

MI = 2**20
FULL_1MI = "etcdserver: mvcc: database space exceeded (--lmdb-map-size=1Mi)"


def cm(name: str, size: int = 0) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": name}, "data": {"x": "y" * size}}


def outcome(d: Deferred[Any]) -> Any:
    """The result of a fired Deferred, or the exception it failed with."""
    out: list[Any] = []
    d.addCallbacks(out.append, lambda f: out.append(f.value))
    assert out, "not finished"
    return out[0]


def make(path: Path, size: int, ceiling: int | None = None) -> tuple[LMDBStorage, ManualWriter]:
    writer = ManualWriter()
    env = open_environment(str(path), size)
    return LMDBStorage(env, writer, map_ceiling=ceiling), writer


def write(storage: LMDBStorage, writer: ManualWriter, d: Deferred[Any]) -> Any:
    writer.run_all()
    return outcome(d)


def fill(storage: LMDBStorage, writer: ManualWriter, size: int = 20000) -> int:
    """Create objects until the store refuses one; the number created."""
    for i in range(10000):
        result = write(storage, writer, storage.create(b"/cm/%05d" % i, cm(f"c{i}", size)))
        if isinstance(result, StorageError):
            assert result.code == NO_SPACE, result
            assert str(result) == FULL_1MI
            return i
    raise AssertionError("never full")


def test_sizes_are_spelled_as_flags() -> None:
    assert format_size(64 * MI) == "64Mi"
    assert format_size(8 * 2**30) == "8Gi"
    assert format_size(3 * 2**10) == "3Ki"
    assert format_size(1000) == "1000"
    assert format_size(1536) == "1536"  # not a whole KiB
    assert reserve_for(MI) == 256 * 2**10
    assert reserve_for(8 * 2**30) == 256 * MI


def test_full_map_refuses_writes_but_reads_and_deletes_work(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", MI)
    created = fill(storage, writer)
    assert created > 10
    # Reads keep working, and see every acknowledged write.
    assert storage.get(b"/cm/00000").object["metadata"]["name"] == "c0"
    assert len(storage.get_list(b"/cm/", ListOptions()).items) == created
    # Updates are refused too; deletes and compaction run in the reserve.
    current = storage.get(b"/cm/00001")
    update = storage.guaranteed_update(b"/cm/00001", lambda obj, _: {**obj, "data": {}})
    d = ensureDeferred(update)
    assert str(write(storage, writer, d)) == FULL_1MI
    assert storage.get(b"/cm/00001").revision == current.revision
    deleted = write(storage, writer, ensureDeferred(storage.delete(b"/cm/00000")))
    assert deleted.object["metadata"]["name"] == "c0"
    assert isinstance(write(storage, writer, storage.compact(-1.0)), int)


def test_compaction_frees_room_for_new_writes(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", MI)
    created = fill(storage, writer)
    for i in range(created // 2):
        write(storage, writer, ensureDeferred(storage.delete(b"/cm/%05d" % i)))
    write(storage, writer, storage.compact(-1.0))  # the change log held the deleted objects
    # LMDB reuses the pages a transaction frees from the one after next on (the previous
    # snapshot stays whole): a small write first, then the large one has the room.
    write(storage, writer, storage.create(b"/cm/small", cm("small")))
    again = write(storage, writer, storage.create(b"/cm/again", cm("again", 20000)))
    assert again.object["metadata"]["name"] == "again"


def test_batch_that_does_not_fit_is_retried_one_write_at_a_time(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", MI)
    # Below the quota, but the next batch needs more than the map has left.
    i = 0
    while (storage._env.info()["last_pgno"] + 1) * 4096 < storage._space.quota - 60000:
        assert write(storage, writer, storage.create(b"/f/%d" % i, cm(f"f{i}", 20000)))
        i += 1
    big = storage.create(b"/cm/big", cm("big", 500000))
    small = storage.create(b"/cm/small", cm("small", 10))
    later = storage.create(b"/cm/later", cm("later", 10))
    writer.run_all()
    assert str(outcome(big)) == FULL_1MI
    assert outcome(small).object["metadata"]["name"] == "small"
    assert outcome(later).object["metadata"]["name"] == "later"
    with pytest.raises(StorageError):
        storage.get(b"/cm/big")  # no half-written batch
    assert storage.get(b"/cm/later").revision == storage.current_revision()


def test_map_grows_transparently_up_to_the_ceiling(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", MI, ceiling=4 * MI)
    batch = [storage.create(b"/cm/%03d" % i, cm(f"c{i}", 20000)) for i in range(40)]
    writer.run_all()
    assert storage._space.size() == 2 * MI  # 40 x 20 KB, twice (object and log): 1.6 MB
    assert [outcome(d).revision for d in batch] == list(range(1, 41))
    for i in range(40, 1000):
        result = write(storage, writer, storage.create(b"/cm/%03d" % i, cm(f"c{i}", 20000)))
        if isinstance(result, StorageError):
            break
    assert str(result) == "etcdserver: mvcc: database space exceeded (--lmdb-map-size=4Mi)"
    # Creates and updates stop at the quota; the rest of the ceiling is kept for deletes.
    assert storage._space.size() == storage._space.quota == 4 * MI - 256 * 2**10
    assert write(storage, writer, ensureDeferred(storage.delete(b"/cm/000")))
    assert storage._space.size() == 4 * MI  # widened for the delete ...
    assert isinstance(
        write(storage, writer, storage.create(b"/cm/x", cm("x", 20000))), StorageError
    )
    # ... and narrowed before a create, to the quota or the last page the delete used
    end = (storage._env.info()["last_pgno"] + 1) * 4096
    assert storage._space.size() == max(storage._space.quota, end) < 4 * MI


def test_growth_by_another_process_is_adopted_by_reads_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "db"
    storage, writer = make(path, MI, ceiling=64 * MI)
    assert write(storage, writer, storage.create(b"/cm/mine", cm("mine")))
    grower = """
import lmdb, sys
env = lmdb.open(sys.argv[1], map_size=int(sys.argv[2]) * 2**20, max_dbs=4)
db = env.open_db(b"objects")
with env.begin(write=True) as txn:
    for i in range(int(sys.argv[4])):
        txn.put(sys.argv[3].encode() + b"%03d" % i, bytes(8) + b"x" * 20000, db=db)
"""
    grow = [sys.executable, "-c", grower, str(path)]
    subprocess.run([*grow, "16", "/a/", "300"], check=True, timeout=60)
    assert storage.get(b"/cm/mine").object["metadata"]["name"] == "mine"  # MDB_MAP_RESIZED
    assert storage._space.size() == 16 * MI
    subprocess.run([*grow, "32", "/b/", "600"], check=True, timeout=60)
    created = write(storage, writer, storage.create(b"/cm/after", cm("after")))
    assert created.object["metadata"]["name"] == "after"  # the writer met MDB_MAP_RESIZED
    assert storage._space.size() == 32 * MI


def test_disk_full_fails_the_write_and_the_next_one_succeeds(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", 64 * MI)
    assert write(storage, writer, storage.create(b"/cm/first", cm("first", 100)))
    data = tmp_path / "db" / "data.mdb"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    limit = data.stat().st_size + 4096
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))  # SIGXFSZ: Python ignores it
    try:
        result = write(storage, writer, storage.create(b"/cm/big", cm("big", 200000)))
        assert isinstance(result, StorageError) and result.code == NO_SPACE
        assert str(result).startswith("database write failed: mdb_txn_commit: ")
        assert str(result).endswith(f"{data} reached the file size limit (RLIMIT_FSIZE={limit})")
        assert storage.get(b"/cm/first").object["metadata"]["name"] == "first"
        with pytest.raises(StorageError):
            storage.get(b"/cm/big")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    again = write(storage, writer, storage.create(b"/cm/big", cm("big", 200000)))
    assert again.revision == storage.current_revision() == 2


def test_disk_error_of_a_batch_keeps_the_writes_that_fit(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", 64 * MI)
    assert write(storage, writer, storage.create(b"/cm/first", cm("first", 100)))
    data = tmp_path / "db" / "data.mdb"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (data.stat().st_size + 16384, hard))
    try:
        big = storage.create(b"/cm/big", cm("big", 200000))
        small = storage.create(b"/cm/small", cm("small", 10))
        writer.run_all()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert isinstance(outcome(big), StorageError)
    assert outcome(small).object["metadata"]["name"] == "small"


def test_ceiling_below_the_data_is_the_data(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", 4 * MI)
    for i in range(40):
        write(storage, writer, storage.create(b"/cm/%03d" % i, cm(f"c{i}", 20000)))
    storage._env.close()
    env = open_environment(str(tmp_path / "db"), MI)  # LMDB maps at least the data
    reopened = LMDBStorage(env, ManualWriter(), map_ceiling=MI)
    assert reopened._space.ceiling == env.info()["map_size"] > MI
    assert reopened.get(b"/cm/039").object["metadata"]["name"] == "c39"


def test_lmdb_error_types_are_what_the_store_catches() -> None:
    assert issubclass(lmdb.MapFullError, lmdb.Error)
    assert issubclass(lmdb.MapResizedError, lmdb.Error)
    assert issubclass(lmdb.DiskError, lmdb.Error)


def test_delete_in_a_batch_with_writes_uses_the_reserve_alone(tmp_path: Path) -> None:
    storage, writer = make(tmp_path / "db", MI)
    created = fill(storage, writer)
    space = storage._space
    widened = 0
    for round_ in range(6):  # each delete logs its object: the reserve holds a few
        victim = b"/cm/%05d" % round_
        storage.mark_compaction()  # in flight: the next three wait and go as one batch
        first = storage.create(b"/cm/first-%d" % round_, cm("first", 40000))
        delete = ensureDeferred(storage.delete(victim))
        big = storage.create(b"/cm/big-%d" % round_, cm("big", 60000))
        writer.run_all()
        assert str(outcome(first)) == str(outcome(big)) == FULL_1MI
        assert outcome(delete).key == victim
        end = (storage._env.info()["last_pgno"] + 1) * 4096
        widened += end > space.quota  # the delete went past the quota, into the reserve
        storage.mark_compaction()
        writer.run_all()  # the next batch narrows the map to the data's end
        assert space.size() == max(end, space.quota)
    assert widened
    assert len(storage.get_list(b"/cm/", ListOptions()).items) == created - 6
