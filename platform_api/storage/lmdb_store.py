"""LMDB implementation of the storage interface, with group commit.

Layout (four named databases in one environment):

- ``objects``: key -> 8-byte big-endian mod revision + JSON of the current object.
- ``log``: 8-byte revision -> change record (type, time, key, new JSON, previous JSON),
  kept for the history window; watches, exact-revision lists and other processes
  sharing the data directory read it.
- ``meta``: ``rev`` (the global revision) and ``compacted`` (last dropped log revision).
- ``counts``: objects per resource and per namespace (lmdb_counts.py).

Reads run inline on an MVCC snapshot.  Writes are queued; one writer commits every
queued write in one transaction and one fsync, then the callers' Deferreds fire on the
reactor thread in revision order.  The server's writer is a process of its own
(``writer``: lmdb_process.py, lmdb_writer.py); tests and encrypting servers run it on
a thread (``run_in_writer``).  Business logic (``try_update``) always runs on the
reactor thread; the writer only does compare-and-swap on revisions, so a lost race
re-runs ``try_update`` on the fresh object instead of losing a write.  The writer's
transaction and the record formats are in lmdb_commit.py; what happens when a
transaction fails, in lmdb_recovery.py.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import lmdb
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from platform_api.privatefiles import FILE_MODE, private_dir, private_file
from platform_api.storage import lmdb_counts
from platform_api.storage.interface import (
    CONFLICT,
    EXPIRED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    TOO_LARGE_REVISION,
    Event,
    ListOptions,
    ListResult,
    Preconditions,
    StorageError,
    Stored,
    TryUpdate,
    Unreadable,
    ValidateDeletion,
    deleted_at,
)
from platform_api.storage.limits import check_write_size
from platform_api.storage.lmdb_commit import (
    COMPACT,
    CREATE,
    DELETE,
    MARK,
    META_COMPACTED,
    META_FLOOR,
    META_REV,
    REV,
    UPDATE,
    Committer,
    Op,
    Outcome,
    decode_log,
    meta_int,
)
from platform_api.storage.lmdb_counts import countable
from platform_api.storage.lmdb_format import upgrade
from platform_api.storage.lmdb_history import list_at, split
from platform_api.storage.lmdb_lists import KeysLeft, chunk, keys_on
from platform_api.storage.lmdb_recovery import WriteRecovery
from platform_api.storage.lmdb_space import MapSpace, RemappingEnvironment
from platform_api.storage.transformer import (
    ValueTransformer,
    plain_event,
    read,
)
from platform_api.storage.updates import next_state

log = Logger()
T = TypeVar("T")
RunInWriter = Callable[[Callable[[], Any]], "Deferred[Any]"]
Deliver = Callable[[list[Any], list[Event], list[Op]], None]


class WriterChannel(Protocol):
    """Where writes go when another process commits them (lmdb_process.py)."""

    def attach(
        self, deliver: Deliver, events_since: Callable[[int], list[Event]], revision: int
    ) -> None:
        """``deliver(results, events, ops)`` answers ops; ``events_since`` reads the
        change log after ``revision`` (commits whose outcome was lost with the process)."""

    def submit(self, ops: list[Op]) -> None:
        """Send ``ops`` (their Deferreds set) to be committed in order."""


def open_environment(path: str, map_size: int, ceiling: int | None = None) -> lmdb.Environment:
    """Open (creating) the environment, upgraded to this release's data format (growing
    the map up to ``ceiling`` if that needs room); safe to share between processes.  Its
    directory and files are the server user's alone: they hold every object."""
    private_dir(path)
    env = lmdb.open(
        path,
        mode=FILE_MODE,
        map_size=map_size,
        max_dbs=4,  # objects, log, meta, counts
        subdir=True,
        sync=True,
        metasync=True,
        readahead=False,
        max_readers=512,
    )
    env.reader_check()  # drop reader slots left by crashed processes
    for name in ("data.mdb", "lock.mdb"):
        private_file(os.path.join(path, name))
    upgrade(env, ceiling)
    return env


def _writes_go_to_the_writer_process(work: Callable[[], Any]) -> Deferred[Any]:
    raise AssertionError("this storage commits through its writer process")


class LMDBStorage(WriteRecovery):
    """The storage interface over one LMDB environment."""

    _RESERVE_KINDS = frozenset({DELETE, COMPACT, MARK})  # they may use the map's reserve

    def __init__(
        self,
        env: lmdb.Environment,
        run_in_writer: RunInWriter | None,
        on_commit: Callable[[list[Event]], None] | None = None,
        clock: Callable[[], float] = time.time,
        transformer: ValueTransformer | None = None,
        map_ceiling: int | None = None,
        writer: WriterChannel | None = None,
    ) -> None:
        self._objects = env.open_db(b"objects")
        self._log = env.open_db(b"log")
        self._meta = env.open_db(b"meta")
        self._counts = env.open_db(b"counts")  # lmdb_counts.py
        # The map grows up to ``map_ceiling`` (--lmdb-map-size; default: its size now).
        self._space = MapSpace(env, map_ceiling)
        self._env = RemappingEnvironment(env, self._space)
        self._run_in_writer = run_in_writer or _writes_go_to_the_writer_process
        self._clock = clock
        self.on_commit = on_commit
        # Encryption at rest (storage/encryption): values in ``objects`` and the log.
        self._transformer = transformer
        self._committer = Committer(
            self._env, self._space, (self._objects, self._log, self._meta, self._counts)
        )
        # Appended to on the reactor, drained by the writer once it holds the write lock.
        self._pending: deque[Op] = deque()
        self._left = KeysLeft()  # what chunks told of the keys after them (lmdb_lists.py)
        self._busy = False
        # Or a writer process commits them (lmdb_writer.py): its results come back here.
        self._writer = writer
        if writer is not None:
            writer.attach(self._deliver, self.events_since, self.current_revision())

    # -- reads ---------------------------------------------------------------------

    def _meta_int(self, txn: lmdb.Transaction, name: bytes) -> int:
        return meta_int(txn, self._meta, name)

    def current_revision(self) -> int:
        with self._env.begin() as txn:
            return self._meta_int(txn, META_REV)

    def compacted_revision(self) -> int:
        with self._env.begin() as txn:
            return self._list_floor(txn)

    def _list_floor(self, txn: lmdb.Transaction) -> int:
        """Lists below this revision are expired: the log is pruned there, or kube's
        compactor (``mark_compaction``) has passed it."""
        return max(self._meta_int(txn, META_COMPACTED), self._meta_int(txn, META_FLOOR))

    def get(self, key: bytes) -> Stored:
        with self._env.begin() as txn:
            raw = txn.get(key, db=self._objects)
        if raw is None:
            raise StorageError(KEY_NOT_FOUND, key)
        return read(self._transformer, key, *split(raw))

    def count(self, prefix: bytes) -> int:
        with self._env.begin() as txn:
            if countable(prefix):
                revision = self._meta_int(txn, META_REV)
                kept = lmdb_counts.read(txn, self._counts, self._meta, prefix, revision)
                if kept is not None:
                    return kept
            cursor = txn.cursor(db=self._objects)
            return keys_on(cursor, prefix) if cursor.set_range(prefix) else 0

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        known = self._left.before(prefix, options)
        with self._env.begin() as txn:
            revision = self._meta_int(txn, META_REV)
            if options.revision and options.revision != revision:
                result = self._list_at(txn, prefix, options, revision, known)
            else:
                if known is None and self._counted_whole(prefix, options):
                    known = lmdb_counts.read(txn, self._counts, self._meta, prefix, revision)
                result = chunk(
                    txn, self._objects, self._transformer, prefix, options, revision, known
                )
        self._left.note(prefix, result)
        return result

    @staticmethod
    def _counted_whole(prefix: bytes, options: ListOptions) -> bool:
        """A first chunk of a counted prefix whose remainder the counts tell."""
        plain = options.predicate is None and not options.single and options.limit > 0
        return plain and not options.start_after and countable(prefix)

    def _list_at(
        self,
        txn: lmdb.Transaction,
        prefix: bytes,
        options: ListOptions,
        newest: int,
        known: int | None,
    ) -> ListResult:
        """A chunk of ``prefix`` as of ``options.revision``, from the change log."""
        target = options.revision
        if target > newest:
            raise StorageError(TOO_LARGE_REVISION, prefix, revision=newest)
        if target < self._list_floor(txn):
            raise StorageError(EXPIRED, prefix, revision=target)
        dbs = (self._objects, self._log)
        return list_at(txn, dbs, self._transformer, prefix, newest, options, known)

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        with self._env.begin() as txn:
            compacted = self._meta_int(txn, META_COMPACTED)
            if revision < compacted:
                raise StorageError(EXPIRED, prefix, revision=compacted)
            events = []
            cursor = txn.cursor(db=self._log)
            if cursor.set_range(REV.pack(revision + 1)):
                for raw_rev, record in cursor:
                    event, _ = decode_log(REV.unpack(raw_rev)[0], record)
                    if event.key.startswith(prefix):
                        events.append(plain_event(self._transformer, event))
            return events

    # -- writes --------------------------------------------------------------------

    def _submit(self, op: Op) -> Deferred[Any]:
        d = self._queue(op)
        if self._writer is not None:
            self._writer.submit(self._take())
        else:
            self._kick()
        return d

    def submit_all(self, ops: list[Op]) -> list[Deferred[Any]]:
        """Queue ``ops``, then commit them together (the writer process's batch: the
        server that sent them checked their sizes)."""
        deferreds = [self._queue(op, checked=True) for op in ops]
        self._kick()
        return deferreds

    def _queue(self, op: Op, checked: bool = False) -> Deferred[Any]:
        op.deferred = Deferred()
        if not checked and op.obj is not None and op.kind in (CREATE, UPDATE):
            try:  # what etcd would refuse for its size, refused here too
                check_write_size(op.key, op.obj, op.expected)
            except StorageError as e:
                op.deferred.errback(e)
                return op.deferred
        self._pending.append(op)
        return op.deferred

    def _kick(self) -> None:
        if self._busy or not self._pending:
            return
        self._busy = True
        self._space.settle()  # the writer is idle: narrow the map if deletes widened it
        batch: list[Op] = []  # filled on the writer thread (_take)
        d = self._run_in_writer(lambda: self._commit_queued(batch))
        d.addCallback(self._committed, batch)
        d.addErrback(self._queued_failed, batch)

    def _commit_queued(self, batch: list[Op]) -> Outcome:
        """Runs on the writer thread.  The queue is drained only once the write lock is
        held: with several workers, the writes that queued while a sibling held it go in
        this transaction too, not in one more of their own."""
        return self._committer.commit(batch, self._clock(), self._transformer, take=self._take)

    def _take(self) -> list[Op]:
        """Every queued write, oldest first (writer thread; the reactor only appends)."""
        pending, ops = self._pending, []
        while pending:
            ops.append(pending.popleft())
        return ops

    def _queued_failed(self, failure: Any, batch: list[Op]) -> None:
        if not batch:  # failed before the lock was held: the writes are still queued
            batch.extend(self._take())
        if not batch:
            self._busy = False
            return
        self._batch_failed(failure, batch)

    def _commit(self, batch: list[Op]) -> Outcome:
        """Runs on the writer thread: one transaction, one sync, for the whole batch."""
        return self._committer.commit(batch, self._clock(), self._transformer)

    def _committed(self, outcome: Outcome, batch: list[Op]) -> None:
        try:
            self._deliver(*outcome, batch)
        finally:
            # Writes queued while the callers resumed go out together in the next batch.
            self._busy = False
            self._kick()

    def _deliver(self, results: list[Any], events: list[Event], batch: list[Op]) -> None:
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
        return self._submit(Op(COMPACT, b"", cutoff=self._clock() - older_than))

    def mark_compaction(self) -> Deferred[int]:
        """One tick of kube's compactor: bump the revision, and expire lists below the
        revision the previous tick left (returned), so a continue token runs out within
        two ticks even when nothing else is written."""
        return self._submit(Op(MARK, b""))

    def create(self, key: bytes, obj: dict[str, Any]) -> Deferred[Stored]:
        return self._submit(Op(CREATE, key, obj))

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
                op = Op(CREATE, key, new)
            else:
                op = Op(UPDATE, key, new, current.revision)
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
        await self._submit(Op(DELETE, key, stand_in, current.revision))

    async def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Stored:
        while True:
            current = self.get(key)
            if isinstance(current, Unreadable):
                raise current.error  # only the unsafe delete (delete_corrupt) removes it
            if preconditions is not None:
                why = preconditions.failure(current.object)
                if why:
                    raise StorageError(INVALID_OBJECT, key, why)
            if validate is not None:
                validate(current.object)
            try:
                stored: Stored = await self._submit(Op(DELETE, key, None, current.revision))
                return deleted_at(stored, stored.revision)
            except StorageError as e:
                if e.code != CONFLICT:
                    raise
