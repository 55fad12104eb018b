"""The LMDB writer's side: the record formats, and one write transaction per batch.

``objects`` values are an 8-byte big-endian mod revision followed by the object's
(possibly encrypted) JSON; ``log`` maps an 8-byte revision to a change record (type,
time, key, previous revision, new value, previous value); ``meta`` holds the counters
named ``META_*`` below.  ``Committer.commit`` runs on the writer thread and only
compares revisions: every decision about an object's content was made on the reactor.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lmdb
from twisted.internet.defer import Deferred

from platform_api.gotext import object_json
from platform_api.storage.interface import (
    ADDED,
    CONFLICT,
    DELETED,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    MODIFIED,
    UNREACHABLE,
    Event,
    StorageError,
    Stored,
)
from platform_api.storage.lmdb_counts import Tally
from platform_api.storage.lmdb_space import MapSpace, RemappingEnvironment
from platform_api.storage.transformer import (
    TRANSFORM_FAILED,
    TransformError,
    ValueTransformer,
    read_logged,
    write,
)

REV = struct.Struct(">Q")
# type, unix time, key length, previous revision, new-object length
LOG_HEADER = struct.Struct(">BdHQI")
_TYPES = (ADDED, MODIFIED, DELETED)
CREATE, UPDATE, DELETE, COMPACT, MARK = range(5)
META_REV = b"rev"
META_COMPACTED = b"compacted"
# kube's compactor, emulated for lists: each tick bumps the revision (its write to
# compact_rev_key) and compacts to the previous tick's revision ("floor").
META_MARK = b"mark"
META_FLOOR = b"floor"
Outcome = tuple[list[Any], list[Event]]


@dataclass
class Op:
    """One queued write: its kind (CREATE...MARK), key, object and expected revision."""

    kind: int
    key: bytes
    obj: dict[str, Any] | None = None
    expected: int = 0
    cutoff: float = 0.0
    deferred: Deferred[Any] | None = None


def encode_log(kind: str, when: float, key: bytes, prev_rev: int, new: bytes, prev: bytes) -> bytes:
    header = LOG_HEADER.pack(_TYPES.index(kind), when, len(key), prev_rev, len(new))
    return header + key + new + prev


def decode_log(revision: int, record: bytes) -> tuple[Event, float]:
    """A change-log record as an Event, with its commit time."""
    kind, when, key_len, prev_rev, new_len = LOG_HEADER.unpack_from(record)
    start = LOG_HEADER.size
    key = record[start : start + key_len]
    new = record[start + key_len : start + key_len + new_len]
    prev = record[start + key_len + new_len :]
    type_ = _TYPES[kind]
    prev_stored = Stored(key, prev_rev, prev) if prev else None
    if type_ == DELETED:
        return Event(type_, revision, key, prev_stored, prev_stored), when
    return Event(type_, revision, key, Stored(key, revision, new), prev_stored), when


def meta_int(txn: lmdb.Transaction, meta: Any, name: bytes) -> int:
    raw = txn.get(name, db=meta)
    return REV.unpack(raw)[0] if raw else 0


class Committer:
    """Commits a batch of ops in one transaction (one sync), on the writer thread."""

    def __init__(
        self,
        env: RemappingEnvironment,
        space: MapSpace,
        dbs: tuple[Any, Any, Any, Any],
    ) -> None:
        self.env, self.space = env, space
        self.objects, self.log, self.meta, self.counts = dbs

    def commit(
        self,
        batch: list[Op],
        now: float,
        transformer: ValueTransformer | None,
        take: Callable[[], list[Op]] | None = None,
    ) -> Outcome:
        """Each op's result (a Stored, a revision, or its StorageError) and the events;
        values are written through ``transformer`` (encryption at rest).  ``take``'s ops
        join ``batch`` once the write lock is held."""
        results: list[Any] = []
        events: list[Event] = []
        with self.space.lock, self.env.begin(write=True) as txn:
            if take is not None:
                batch.extend(take())
            revision = start = meta_int(txn, self.meta, META_REV)
            tally = Tally()
            for op in batch:
                if op.kind == COMPACT:
                    try:
                        results.append(self._compact(txn, op.cutoff))
                    except Exception as e:  # never let housekeeping fail the batch's writes
                        results.append(StorageError(UNREACHABLE, b"", f"compaction failed: {e}"))
                    continue
                if op.kind == MARK:
                    revision += 1  # no object: the revision alone moves, as kube's does
                    results.append(self._mark(txn, revision))
                    continue
                current = txn.get(op.key, db=self.objects)
                outcome = _check(op, current)
                if outcome is not None:
                    results.append(outcome)
                    continue
                try:
                    event = self._apply(txn, op, current, (revision + 1, now), transformer)
                except TransformError as e:  # encryption failed: this write only
                    results.append(StorageError(TRANSFORM_FAILED, op.key, str(e)))
                    continue
                revision += 1
                events.append(event)
                if op.kind != UPDATE:
                    tally.add(op.key, 1 if op.kind == CREATE else -1)
                # A delete's result: the last state's bytes at the deletion's revision
                # (LMDBStorage.delete restamps them, outside the write lock).
                gone = event.prev
                if op.kind == DELETE and gone is not None:
                    gone = Stored(op.key, event.revision, gone.data)
                results.append(event.stored if op.kind != DELETE else gone)
            txn.put(META_REV, REV.pack(revision), db=self.meta)
            tally.write(txn, self.counts, self.meta, start, revision)
        return results, events

    def _mark(self, txn: lmdb.Transaction, revision: int) -> int:
        previous = meta_int(txn, self.meta, META_MARK)
        txn.put(META_FLOOR, REV.pack(previous), db=self.meta)
        txn.put(META_MARK, REV.pack(revision), db=self.meta)
        return previous

    def _apply(
        self,
        txn: lmdb.Transaction,
        op: Op,
        current: bytes | None,
        at: tuple[int, float],
        transformer: ValueTransformer | None,
    ) -> Event:
        revision, now = at
        prev = Stored(op.key, REV.unpack_from(current)[0], current[8:]) if current else None
        if op.kind == DELETE:
            txn.delete(op.key, db=self.objects)
            new = b""
            type_ = DELETED
            if op.obj is not None and prev is not None:
                # A corrupt value: the log keeps its stand-in, stored as any value is.
                stand_in = write(transformer, op.key, object_json(op.obj))
                prev = Stored(op.key, prev.revision, stand_in)
        else:
            assert op.obj is not None
            op.obj["metadata"]["resourceVersion"] = str(revision)
            plain = object_json(op.obj)
            new = write(transformer, op.key, plain)
            txn.put(op.key, REV.pack(revision) + new, db=self.objects)
            type_ = ADDED if op.kind == CREATE else MODIFIED
        record = encode_log(
            type_, now, op.key, prev.revision if prev else 0, new, prev.data if prev else b""
        )
        txn.put(REV.pack(revision), record, db=self.log, append=True)
        prev = read_logged(transformer, prev)
        if type_ == DELETED:
            return Event(type_, revision, op.key, prev, prev)
        return Event(type_, revision, op.key, Stored(op.key, revision, plain), prev)

    def _compact(self, txn: lmdb.Transaction, cutoff: float, budget: int = 20000) -> int:
        """Drop log records older than ``cutoff`` (bounded work per batch)."""
        compacted = meta_int(txn, self.meta, META_COMPACTED)
        cursor = txn.cursor(db=self.log)
        if not cursor.first():
            return compacted
        while budget > 0 and cursor.key():  # an empty key: past the last record
            record = cursor.value()
            when = LOG_HEADER.unpack_from(record)[1]
            if when >= cutoff:
                break
            compacted = REV.unpack(cursor.key())[0]
            if not cursor.delete():
                break
            budget -= 1
        txn.put(META_COMPACTED, REV.pack(compacted), db=self.meta)
        return compacted


def _check(op: Op, current: bytes | None) -> StorageError | None:
    if op.kind == CREATE:
        return StorageError(KEY_EXISTS, op.key) if current is not None else None
    if current is None:
        return StorageError(KEY_NOT_FOUND, op.key)
    if REV.unpack_from(current)[0] != op.expected:
        return StorageError(CONFLICT, op.key)
    return None
