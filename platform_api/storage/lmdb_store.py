"""LMDB implementation of the storage interface, with group commit.

Layout (three named databases in one environment):

- ``objects``: key -> 8-byte big-endian mod revision + JSON of the current object.
- ``log``: 8-byte revision -> change record (type, time, key, new JSON, previous JSON),
  kept for the history window; watches, exact-revision lists and other processes
  sharing the data directory read it.
- ``meta``: ``rev`` (the global revision) and ``compacted`` (last dropped log revision).

Reads run inline on an MVCC snapshot.  Writes are queued; one writer thread commits
every queued write in one transaction and one fsync, then the callers' Deferreds
fire on the reactor thread in revision order.  Business logic (``try_update``) always
runs on the reactor thread; the writer only does compare-and-swap on revisions, so
a lost race re-runs ``try_update`` on the fresh object instead of losing a write.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import lmdb
import orjson
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from platform_api.storage.interface import (
    ADDED,
    CONFLICT,
    DELETED,
    EXPIRED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    MODIFIED,
    TOO_LARGE_REVISION,
    UNREACHABLE,
    Event,
    ListOptions,
    ListResult,
    Preconditions,
    StorageError,
    Stored,
    TryUpdate,
    ValidateDeletion,
)
from platform_api.storage.limits import check_write_size
from platform_api.storage.lmdb_recovery import WriteRecovery
from platform_api.storage.lmdb_space import MapSpace, RemappingEnvironment
from platform_api.storage.transformer import (
    TRANSFORM_FAILED,
    TransformError,
    ValueTransformer,
    plain_event,
    read,
    read_logged,
    write,
)
from platform_api.storage.updates import next_state

log = Logger()
T = TypeVar("T")
RunInWriter = Callable[[Callable[[], Any]], "Deferred[Any]"]

_REV = struct.Struct(">Q")
# type, unix time, key length, previous revision, new-object length
_LOG_HEADER = struct.Struct(">BdHQI")
_TYPES = (ADDED, MODIFIED, DELETED)
_CREATE, _UPDATE, _DELETE, _COMPACT, _MARK = range(5)
_META_REV = b"rev"
_META_COMPACTED = b"compacted"
# kube's compactor, emulated for lists: each tick bumps the revision (its write to
# compact_rev_key) and compacts to the previous tick's revision ("floor").
_META_MARK = b"mark"
_META_FLOOR = b"floor"


def open_environment(path: str, map_size: int) -> lmdb.Environment:
    """Open (creating) the environment; safe to share between processes."""
    env = lmdb.open(
        path,
        map_size=map_size,
        max_dbs=4,
        subdir=True,
        sync=True,
        metasync=True,
        readahead=False,
        max_readers=512,
    )
    env.reader_check()  # drop reader slots left by crashed processes
    return env


@dataclass
class _Op:
    kind: int
    key: bytes
    obj: dict[str, Any] | None = None
    expected: int = 0
    cutoff: float = 0.0
    deferred: Deferred[Any] | None = None


def _encode_log(
    kind: str, when: float, key: bytes, prev_rev: int, new: bytes, prev: bytes
) -> bytes:
    header = _LOG_HEADER.pack(_TYPES.index(kind), when, len(key), prev_rev, len(new))
    return header + key + new + prev


def decode_log(revision: int, record: bytes) -> tuple[Event, float]:
    """A change-log record as an Event, with its commit time."""
    kind, when, key_len, prev_rev, new_len = _LOG_HEADER.unpack_from(record)
    start = _LOG_HEADER.size
    key = record[start : start + key_len]
    new = record[start + key_len : start + key_len + new_len]
    prev = record[start + key_len + new_len :]
    type_ = _TYPES[kind]
    prev_stored = Stored(key, prev_rev, prev) if prev else None
    if type_ == DELETED:
        return Event(type_, revision, key, prev_stored, prev_stored), when
    return Event(type_, revision, key, Stored(key, revision, new), prev_stored), when


class LMDBStorage(WriteRecovery):
    """The storage interface over one LMDB environment."""

    _RESERVE_KINDS = frozenset({_DELETE, _COMPACT, _MARK})  # they may use the map's reserve

    def __init__(
        self,
        env: lmdb.Environment,
        run_in_writer: RunInWriter,
        on_commit: Callable[[list[Event]], None] | None = None,
        clock: Callable[[], float] = time.time,
        transformer: ValueTransformer | None = None,
        map_ceiling: int | None = None,
    ) -> None:
        self._objects = env.open_db(b"objects")
        self._log = env.open_db(b"log")
        self._meta = env.open_db(b"meta")
        # The map grows up to ``map_ceiling`` (--lmdb-map-size; default: its size now).
        self._space = MapSpace(env, map_ceiling)
        self._env = RemappingEnvironment(env, self._space)
        self._run_in_writer = run_in_writer
        self._clock = clock
        self.on_commit = on_commit
        # Encryption at rest (storage/encryption): values in ``objects`` and the log.
        self._transformer = transformer
        self._pending: list[_Op] = []
        self._busy = False

    # -- reads ---------------------------------------------------------------------

    def _meta_int(self, txn: lmdb.Transaction, name: bytes) -> int:
        raw = txn.get(name, db=self._meta)
        return _REV.unpack(raw)[0] if raw else 0

    def current_revision(self) -> int:
        with self._env.begin() as txn:
            return self._meta_int(txn, _META_REV)

    def compacted_revision(self) -> int:
        with self._env.begin() as txn:
            return self._list_floor(txn)

    def _list_floor(self, txn: lmdb.Transaction) -> int:
        """Lists below this revision are expired: the log is pruned there, or kube's
        compactor (``mark_compaction``) has passed it."""
        return max(self._meta_int(txn, _META_COMPACTED), self._meta_int(txn, _META_FLOOR))

    def get(self, key: bytes) -> Stored:
        with self._env.begin() as txn:
            raw = txn.get(key, db=self._objects)
        if raw is None:
            raise StorageError(KEY_NOT_FOUND, key)
        return read(self._transformer, key, _REV.unpack_from(raw)[0], raw[8:])

    def count(self, prefix: bytes) -> int:
        with self._env.begin() as txn:
            cursor = txn.cursor(db=self._objects)
            if not cursor.set_range(prefix):
                return 0
            n = 0
            for key in cursor.iternext(keys=True, values=False):
                if not key.startswith(prefix):
                    break
                n += 1
            return n

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        with self._env.begin() as txn:
            revision = self._meta_int(txn, _META_REV)
            if options.revision and options.revision != revision:
                return self._list_at(txn, prefix, options, revision)
            cursor = txn.cursor(db=self._objects)
            start = options.start_after + b"\x00" if options.start_after else prefix
            items: list[Stored] = []
            more = False
            if cursor.set_range(max(start, prefix)):
                for key, raw in cursor:
                    if not key.startswith(prefix):
                        break
                    if options.limit and len(items) >= options.limit:
                        more = True
                        break
                    revision_of = _REV.unpack_from(raw)[0]
                    stored = read(self._transformer, key, revision_of, raw[8:], listing=True)
                    if options.predicate is None or options.predicate(stored.object):
                        items.append(stored)
            if not more:
                return ListResult(items, revision, None, None)
            remaining = None
            if options.predicate is None:
                remaining = 1
                for key in cursor.iternext(keys=True, values=False):
                    if not key.startswith(prefix):
                        break
                    remaining += 1
                remaining -= 1  # the cursor still points at the first unreturned key
            return ListResult(items, revision, items[-1].key if items else None, remaining)

    def _list_at(
        self, txn: lmdb.Transaction, prefix: bytes, options: ListOptions, newest: int
    ) -> ListResult:
        """The state of ``prefix`` as of ``options.revision``, rebuilt from the change log."""
        target = options.revision
        if target > newest:
            raise StorageError(TOO_LARGE_REVISION, prefix, revision=newest)
        if target < self._list_floor(txn):
            raise StorageError(EXPIRED, prefix, revision=target)
        state: dict[bytes, Stored] = {}
        cursor = txn.cursor(db=self._objects)
        if cursor.set_range(prefix):
            key: bytes
            raw: bytes
            for key, raw in cursor:  # type: ignore[assignment]
                if not key.startswith(prefix):
                    break
                state[key] = read(self._transformer, key, _REV.unpack_from(raw)[0], raw[8:])
        # Undo every change after the target revision, newest first.
        log_cursor = txn.cursor(db=self._log)
        if log_cursor.set_key(_REV.pack(newest)) or log_cursor.last():
            record: bytes
            for raw_rev, record in log_cursor.iterprev():  # type: ignore[assignment]
                revision = _REV.unpack(raw_rev)[0]
                if revision <= target:
                    break
                event, _ = decode_log(revision, record)
                if not event.key.startswith(prefix):
                    continue
                if event.prev is None:
                    state.pop(event.key, None)
                else:
                    state[event.key] = read_logged(self._transformer, event.prev)
        keys = sorted(k for k in state if k > options.start_after)
        items: list[Stored] = []
        continue_key = None
        for i, key in enumerate(keys):
            if options.limit and len(items) >= options.limit:
                continue_key = items[-1].key
                remaining = None if options.predicate else len(keys) - i
                return ListResult(items, target, continue_key, remaining)
            stored = state[key]
            if options.predicate is None or options.predicate(stored.object):
                items.append(stored)
        return ListResult(items, target, None, None)

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        with self._env.begin() as txn:
            compacted = self._meta_int(txn, _META_COMPACTED)
            if revision < compacted:
                raise StorageError(EXPIRED, prefix, revision=compacted)
            events = []
            cursor = txn.cursor(db=self._log)
            if cursor.set_range(_REV.pack(revision + 1)):
                for raw_rev, record in cursor:
                    event, _ = decode_log(_REV.unpack(raw_rev)[0], record)
                    if event.key.startswith(prefix):
                        events.append(plain_event(self._transformer, event))
            return events

    # -- writes --------------------------------------------------------------------

    def _submit(self, op: _Op) -> Deferred[Any]:
        op.deferred = Deferred()
        if op.obj is not None and op.kind in (_CREATE, _UPDATE):
            try:  # what etcd would refuse for its size, refused here too
                check_write_size(op.key, op.obj, op.expected)
            except StorageError as e:
                op.deferred.errback(e)
                return op.deferred
        self._pending.append(op)
        self._kick()
        return op.deferred

    def _kick(self) -> None:
        if self._busy or not self._pending:
            return
        batch, self._pending = self._pending, []
        self._busy = True
        self._space.settle()  # the writer is idle: narrow the map if deletes widened it
        d = self._run_in_writer(lambda: self._commit(batch))
        d.addCallback(self._committed, batch)
        d.addErrback(self._batch_failed, batch)

    def _commit(self, batch: list[_Op]) -> tuple[list[Any], list[Event]]:
        """Runs on the writer thread: one transaction, one sync, for the whole batch."""
        now = self._clock()
        results: list[Any] = []
        events: list[Event] = []
        with self._space.lock, self._env.begin(write=True) as txn:
            revision = self._meta_int(txn, _META_REV)
            for op in batch:
                if op.kind == _COMPACT:
                    try:
                        results.append(self._compact(txn, op.cutoff))
                    except Exception as e:  # never let housekeeping fail the batch's writes
                        results.append(StorageError(UNREACHABLE, b"", f"compaction failed: {e}"))
                    continue
                if op.kind == _MARK:
                    revision += 1  # no object: the revision alone moves, as kube's does
                    previous = self._meta_int(txn, _META_MARK)
                    txn.put(_META_FLOOR, _REV.pack(previous), db=self._meta)
                    txn.put(_META_MARK, _REV.pack(revision), db=self._meta)
                    results.append(previous)
                    continue
                current = txn.get(op.key, db=self._objects)
                outcome = self._check(op, current)
                if outcome is not None:
                    results.append(outcome)
                    continue
                try:
                    event = self._apply(txn, op, current, revision + 1, now)
                except TransformError as e:  # encryption failed: this write only
                    results.append(StorageError(TRANSFORM_FAILED, op.key, str(e)))
                    continue
                revision += 1
                events.append(event)
                results.append(event.stored if op.kind != _DELETE else event.prev)
            txn.put(_META_REV, _REV.pack(revision), db=self._meta)
        return results, events

    @staticmethod
    def _check(op: _Op, current: bytes | None) -> StorageError | None:
        if op.kind == _CREATE:
            return StorageError(KEY_EXISTS, op.key) if current is not None else None
        if current is None:
            return StorageError(KEY_NOT_FOUND, op.key)
        if _REV.unpack_from(current)[0] != op.expected:
            return StorageError(CONFLICT, op.key)
        return None

    def _apply(
        self, txn: lmdb.Transaction, op: _Op, current: bytes | None, revision: int, now: float
    ) -> Event:
        prev = Stored(op.key, _REV.unpack_from(current)[0], current[8:]) if current else None
        if op.kind == _DELETE:
            txn.delete(op.key, db=self._objects)
            new = b""
            type_ = DELETED
            if op.obj is not None and prev is not None:  # a corrupt value: log its stand-in
                prev = Stored(op.key, prev.revision, orjson.dumps(op.obj))
        else:
            assert op.obj is not None
            op.obj["metadata"]["resourceVersion"] = str(revision)
            plain = orjson.dumps(op.obj)
            new = write(self._transformer, op.key, plain)
            txn.put(op.key, _REV.pack(revision) + new, db=self._objects)
            type_ = ADDED if op.kind == _CREATE else MODIFIED
        record = _encode_log(
            type_, now, op.key, prev.revision if prev else 0, new, prev.data if prev else b""
        )
        txn.put(_REV.pack(revision), record, db=self._log, append=True)
        prev = read_logged(self._transformer, prev)
        if type_ == DELETED:
            return Event(type_, revision, op.key, prev, prev)
        return Event(type_, revision, op.key, Stored(op.key, revision, plain), prev)

    def _compact(self, txn: lmdb.Transaction, cutoff: float, budget: int = 20000) -> int:
        """Drop log records older than ``cutoff`` (bounded work per batch)."""
        compacted = self._meta_int(txn, _META_COMPACTED)
        cursor = txn.cursor(db=self._log)
        if not cursor.first():
            return compacted
        while budget > 0 and cursor.key():  # an empty key: past the last record
            record = cursor.value()
            when = _LOG_HEADER.unpack_from(record)[1]
            if when >= cutoff:
                break
            compacted = _REV.unpack(cursor.key())[0]
            if not cursor.delete():
                break
            budget -= 1
        txn.put(_META_COMPACTED, _REV.pack(compacted), db=self._meta)
        return compacted

    def _committed(self, outcome: tuple[list[Any], list[Event]], batch: list[_Op]) -> None:
        try:
            self._deliver(*outcome, batch)
        finally:
            # Writes queued while the callers resumed go out together in the next batch.
            self._busy = False
            self._kick()

    def _deliver(self, results: list[Any], events: list[Event], batch: list[_Op]) -> None:
        if events and self.on_commit is not None:
            try:
                self.on_commit(events)
            except Exception:
                log.failure("publishing committed events")
        for op, result in zip(batch, results, strict=True):
            assert op.deferred is not None
            if isinstance(result, StorageError):
                op.deferred.errback(result)
            else:
                op.deferred.callback(result)

    def compact(self, older_than: float) -> Deferred[int]:
        """Drop change-log records committed before ``now - older_than`` seconds."""
        return self._submit(_Op(_COMPACT, b"", cutoff=self._clock() - older_than))

    def mark_compaction(self) -> Deferred[int]:
        """One tick of kube's compactor: bump the revision, and expire lists below the
        revision the previous tick left (returned), so a continue token runs out within
        two ticks even when nothing else is written."""
        return self._submit(_Op(_MARK, b""))

    def create(self, key: bytes, obj: dict[str, Any]) -> Deferred[Stored]:
        return self._submit(_Op(_CREATE, key, obj))

    async def guaranteed_update(
        self,
        key: bytes,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
    ) -> Stored:
        while True:
            try:
                current: Stored | None = self.get(key)
            except StorageError:
                if not ignore_not_found:
                    raise
                current = None
            new = await next_state(key, current, try_update, preconditions)
            if new is None:
                assert current is not None
                return current
            if current is None:
                op = _Op(_CREATE, key, new)
            else:
                op = _Op(_UPDATE, key, new, current.revision)
            try:
                stored: Stored = await self._submit(op)
                return stored
            except StorageError as e:
                if e.code not in (CONFLICT, KEY_EXISTS, KEY_NOT_FOUND):
                    raise
                # Lost a race: re-read and re-run try_update on the fresh state.

    async def delete_corrupt(self, key: bytes, stand_in: dict[str, Any]) -> None:
        """Remove a value that does not decode; watchers see ``stand_in`` deleted."""
        current = self.get(key)
        await self._submit(_Op(_DELETE, key, stand_in, current.revision))

    async def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Stored:
        while True:
            current = self.get(key)
            if preconditions is not None:
                why = preconditions.failure(current.object)
                if why:
                    raise StorageError(INVALID_OBJECT, key, why)
            if validate is not None:
                validate(current.object)
            try:
                stored: Stored = await self._submit(_Op(_DELETE, key, None, current.revision))
                return stored
            except StorageError as e:
                if e.code != CONFLICT:
                    raise
