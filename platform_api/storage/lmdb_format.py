"""The LMDB data format's version, and the upgrade of an older data directory.

Format 1 parted a namespace from a name with a NUL (``/core/configmaps/a\\x00x``), so
lists across namespaces came out in another order than kube's (``a`` before ``a-b``,
where kube's etcd keys, ``.../a-b/x`` before ``.../a/x``, put ``a-b`` first).
Format 2 keys objects as kube does below its prefix: ``/core/configmaps/a/x``.

Every process that opens the environment runs ``upgrade`` first: one read when the
data is current; otherwise the keys are rewritten in bounded write transactions.  Each
step is idempotent (only keys still holding a NUL are rewritten, and a key's length
does not change), so a process killed half-way, or two starting together, leave data
the next open finishes; the format is recorded once nothing is left to rewrite, so no
process serves before then.  Values are untouched: encryption's authenticated data is
kube's etcd key, which both formats name alike.

Then the object counts (lmdb_counts.py) are counted again if they are stale: never
counted, or other code (an older release, ``migrate-storage``) wrote objects since.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import lmdb
from twisted.logger import Logger

from platform_api.storage import lmdb_counts
from platform_api.storage.lmdb_commit import LOG_HEADER, META_REV, REV, meta_int
from platform_api.storage.lmdb_space import MapSpace

log = Logger()
T = TypeVar("T")

FORMAT = 2
META_FORMAT = b"format"
_OLD_SEPARATOR, _SEPARATOR = b"\x00", b"/"
STEP = 2000  # records rewritten per write transaction


def data_format(env: lmdb.Environment) -> int | None:
    """The environment's recorded format: None for a new environment, 1 for data
    written before formats were recorded."""
    meta = env.open_db(b"meta")
    with env.begin() as txn:
        raw = txn.get(META_FORMAT, db=meta)
        if raw is not None:
            return int(REV.unpack(raw)[0])
        return None if txn.get(b"rev", db=meta) is None else 1


def upgrade(env: lmdb.Environment, ceiling: int | None = None) -> None:
    """Bring the environment to ``FORMAT`` (see the module's docstring)."""
    found = data_format(env)
    if found != FORMAT:
        _reformat(env, found, ceiling)
    _count(env, ceiling)


def _reformat(env: lmdb.Environment, found: int | None, ceiling: int | None) -> None:
    if found is not None and found > FORMAT:
        raise RuntimeError(
            f"{env.path()} holds data format {found}; this release reads format {FORMAT}"
        )
    room = _Room(env, ceiling)
    objects, history, meta = (env.open_db(name) for name in (b"objects", b"log", b"meta"))
    moved = logged = 0
    if found is not None:
        moved = _in_steps(room, _rekey_objects, objects)
        logged = _in_steps(room, _rekey_log, history)
    room.write(lambda txn: txn.put(META_FORMAT, REV.pack(FORMAT), db=meta))
    if found is not None:
        log.info(
            "LMDB data upgraded to format {version}: {moved} keys and {logged} change records",
            version=FORMAT,
            moved=moved,
            logged=logged,
        )


def _count(env: lmdb.Environment, ceiling: int | None) -> None:
    """Count the objects again if the counts are stale (one read when they are not)."""
    objects, meta, counts = (env.open_db(name) for name in (b"objects", b"meta", b"counts"))
    with env.begin() as txn:
        if lmdb_counts.counted_at(txn, meta) == meta_int(txn, meta, META_REV):
            return

    def recount(txn: lmdb.Transaction) -> int:
        return lmdb_counts.recount(txn, objects, counts, meta, meta_int(txn, meta, META_REV))

    total = _Room(env, ceiling).write(recount)
    if total > 0:
        log.info("LMDB objects counted: {total}", total=total)


class _Room:
    """Write transactions that grow the map (up to the ceiling) when it is full; the
    map is left as it is unless one needs room."""

    def __init__(self, env: lmdb.Environment, ceiling: int | None) -> None:
        self.env, self.ceiling = env, ceiling
        self._space: MapSpace | None = None

    def write(self, work: Callable[[lmdb.Transaction], T]) -> T:
        while True:
            try:
                with self.env.begin(write=True) as txn:
                    return work(txn)
            except (lmdb.MapFullError, lmdb.MapResizedError) as e:
                if self._space is None:
                    self._space = MapSpace(self.env, self.ceiling)
                if not self._space.recover(e, self._space.ceiling):
                    raise


Step = Callable[..., tuple[int, bytes | None]]


def _in_steps(room: _Room, step: Step, db: Any) -> int:
    """Run ``step`` on ``db`` in write transactions until it reports no key to resume
    after; how many records it rewrote."""
    after: bytes | None = b""
    done = 0
    while after is not None:
        count, after = room.write(functools.partial(step, db=db, after=after))
        done += count
    return done


def _rekey_objects(txn: lmdb.Transaction, db: Any, after: bytes) -> tuple[int, bytes | None]:
    """Rewrite up to STEP keys holding a NUL past ``after``; where to go on, or None."""
    found = list(_old_keys(txn, db, after))
    for key, value in found:
        txn.delete(key, db=db)
        if not txn.put(key.replace(_OLD_SEPARATOR, _SEPARATOR), value, db=db, overwrite=False):
            raise RuntimeError(f"cannot upgrade {key!r}: its new key is taken")
    return len(found), (found[-1][0] if len(found) == STEP else None)


def _old_keys(txn: lmdb.Transaction, db: Any, after: bytes) -> Iterator[tuple[bytes, bytes]]:
    cursor = txn.cursor(db=db)
    if not cursor.set_range(after + b"\x00" if after else b""):
        return
    taken = 0
    for key, value in cursor.iternext():
        if _OLD_SEPARATOR in key:
            yield bytes(key), bytes(value)
            taken += 1
            if taken == STEP:
                return


def _rekey_log(txn: lmdb.Transaction, db: Any, after: bytes) -> tuple[int, bytes | None]:
    """Rewrite the key inside up to STEP change records past ``after``."""
    cursor = txn.cursor(db=db)
    found = cursor.set_range(after + b"\x00") if after else cursor.first()
    changed, last = 0, None
    while found and changed < STEP:
        revision, record = (bytes(part) for part in cursor.item())
        start = LOG_HEADER.size
        end = start + (LOG_HEADER.unpack_from(record)[2] if len(record) >= start else 0)
        if _OLD_SEPARATOR in record[start:end]:  # (a record too short to hold one is kept)
            key = record[start:end].replace(_OLD_SEPARATOR, _SEPARATOR)
            cursor.put(revision, record[:start] + key + record[end:])
            changed += 1
        last = revision
        found = cursor.next()
    return changed, (last if changed == STEP else None)
