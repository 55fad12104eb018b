"""The storage interface over etcd v3 (``--storage-backend=etcd3``).

Reads come from the watch cache (cache.py), which one etcd watch keeps current: a read
never waits for etcd, and a write returns once this server's cache has seen it, so a
client reads its own writes through the same server.  Writes are single-key etcd
transactions, as kube's etcd3 store makes them: create if the key's create_revision is 0;
update or delete if its mod_revision is still the one read; on a lost race the
transaction's else-branch returns the key as it is now and the update runs again on it.

Objects are stored under kube's key layout (layout.py), encoded as kube encodes them
(values.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import CancelledError, Deferred, ensureDeferred, succeed
from twisted.internet.task import deferLater
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.codec.goshape import set_revision
from platform_api.gotext import object_json
from platform_api.storage import mediatypes, spans
from platform_api.storage.etcd.batch import Batched
from platform_api.storage.etcd.cache import WatchCache, event_type
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.errors import Compacted, EtcdError, storage_call
from platform_api.storage.etcd.kv import Compare, prefix_end
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.standins import StandIns
from platform_api.storage.etcd.startup import range_blocking, status_blocking
from platform_api.storage.etcd.through import ReadThrough, progress_trusted
from platform_api.storage.etcd.values import Values
from platform_api.storage.etcd.watch import ProgressRequester, WatchResponse
from platform_api.storage.etcd.writespans import kind_of, span_fields, span_type, transaction
from platform_api.storage.interface import (
    CONFLICT,
    DELETED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    UNREACHABLE,
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
from platform_api.storage.transformer import ValueTransformer
from platform_api.storage.updates import next_state

log = Logger()
COMPACT_KEY = b"compact_rev_key"  # kube's compactor coordinates its replicas on this key
_PAGE = 10000


class EtcdStorage:
    # etcd keeps every revision until it is compacted; the watch cache only its window:
    # lists at revisions the cache let go are read from etcd (registry/store.py).
    database_history = True

    def __init__(
        self,
        client: EtcdClient,
        layout: KeyLayout,
        reactor: Any,
        *,
        on_commit: Callable[[list[Event]], None] | None = None,
        transformer: ValueTransformer | None = None,
        clock: Callable[[], float] = time.time,
        media_type: str = mediatypes.PROTOBUF,
    ) -> None:
        self.client = client
        self.layout = layout
        self.reactor = reactor
        self.on_commit = on_commit
        self.values = Values(layout, transformer, media_type)  # --storage-media-type
        self._clock = clock
        self.cache = WatchCache(clock)
        self._watching: Deferred[None] | None = None
        self._stopped = False
        self._last_mark = 0
        self._problem: str | None = None
        self._revisions: Batched[None, int] = Batched(self._quorum_revisions, most=1 << 30)
        self._progress = ProgressRequester(reactor, self.cache.has_waiters)
        self._through = ReadThrough(client, layout, self.values, self.cache)
        self._stand_ins = StandIns(layout)  # unsafe deletes' (standins.py)
        # Consistent reads go to etcd itself (through.py) unless its progress notifications
        # can be trusted; known once ``load`` has asked etcd its version.
        self.reads_through = True
        self._compacted = 0  # the newest revision this server compacted etcd to

    # -- start and the watch ------------------------------------------------------------

    def load(self) -> None:
        """Fill the cache with one consistent list (blocking: at start, before serving)."""
        version = status_blocking(self.client).version
        self.reads_through = not progress_trusted(version)
        if self.reads_through:
            log.info(
                "etcd {version}'s progress notifications can run ahead of its events "
                "(fixed in 3.5.13): consistent reads go to etcd, as kube's do",
                version=version,
            )
        root = self.layout.root
        key, revision, items = root, 0, []
        while True:
            result = range_blocking(self.client, key, prefix_end(root), _PAGE, revision)
            revision = revision or result.revision
            for kv in result.kvs:
                stored = self.values.stored(kv)
                if stored is not None:
                    items.append(stored)
            if not result.more:
                break
            key = result.kvs[-1].key + b"\x00"
        self.cache.load(items, revision)

    def start(self) -> None:
        """Follow etcd from the loaded revision; re-watch (or re-load) when the stream ends."""
        self._watching = ensureDeferred(self._follow())
        self._watching.addErrback(self._watch_failed)

    def _watch_failed(self, failure: Failure) -> None:
        if self._stopped and failure.check(CancelledError):
            return  # stop() cancelled it
        log.failure("the etcd watch failed", failure)

    def stop(self) -> None:
        self._stopped = True
        self._progress.stop()
        if self._watching is not None:
            self._watching.cancel()
        self.cache.fail_waiters(StorageError(UNREACHABLE, b"", "the server is stopping"))

    async def _follow(self) -> None:
        root = self.layout.root
        while not self._stopped:
            try:
                # No prev_kv: the cache holds every key's state before each event, and
                # etcd would read it from its backend for every update and delete.
                watch = await self.client.watch(
                    root, prefix_end(root), start_revision=self.cache.revision + 1, prev_kv=False
                )
                self._problem = None
                self._progress.watch = watch
                async for response in watch:
                    self._received(response)
            except Compacted:
                self._progress.watch = None
                log.warn("the etcd watch fell behind a compaction; re-listing")
                await self._reload()
            except EtcdError as e:
                self._progress.watch = None
                self._problem = f"the etcd watch ended: {e}"
                log.warn("{problem}; watching again", problem=self._problem)
                await deferLater(self.reactor, 0.5)

    async def _reload(self) -> None:
        """After a gap: list again; changes in between reach watchers as one batch."""
        before = dict(self.cache.data)
        result = await self.client.range(self.layout.root, prefix_end(self.layout.root))
        now = {s.key: s for kv in result.kvs if (s := self.values.stored(kv)) is not None}
        events = [
            Event("ADDED" if k not in before else "MODIFIED", s.revision, k, s, before.get(k))
            for k, s in now.items()
            if k not in before or before[k].revision != s.revision
        ]
        events += [
            Event(DELETED, result.revision, k, s, s) for k, s in before.items() if k not in now
        ]
        self.cache.load(list(now.values()), result.revision)
        self._publish(sorted(events, key=lambda e: e.revision))
        self.cache.advance(result.revision)

    def _received(self, response: WatchResponse) -> None:
        events = []
        latest: dict[bytes, Stored | None] = {}  # keys this response changed, as it left them
        stand_ins: dict[bytes, Stored] = {}  # an unsafe delete's, just before its DELETE
        for change in response.events:
            kv = change.kv
            key = self.layout.registry_key(kv.key)
            if key is None:
                if change.type != "DELETE":
                    self._stand_ins.read(kv, stand_ins)
                continue
            # The previous state is the one at hand: the cache is current up to here.
            prev = latest[key] if key in latest else self.cache.data.get(key)
            deleted = change.type == "DELETE"
            kind = event_type(kv.create_revision, kv.mod_revision, deleted)
            if deleted:
                prev = prev or Stored(key, kv.mod_revision, b"{}")
                if isinstance(prev, Unreadable):  # an unsafe delete's: what it stands for
                    prev = stand_ins.pop(key, prev)
                events.append(Event(kind, kv.mod_revision, key, prev, prev))
                latest[key] = None
            else:
                stored = self.values.own_write(key, kv) or self.values.stored(kv)
                events.append(Event(kind, kv.mod_revision, key, stored, prev))
                latest[key] = stored
        if response.is_progress:
            self.cache.bookmarks += 1
        self._publish(self.cache.apply(events, response.revision))
        self.cache.advance(response.revision)

    def _publish(self, events: list[Event]) -> None:
        if events and self.on_commit is not None:
            try:
                self.on_commit(events)
            except Exception:
                log.failure("publishing etcd events")

    def problem(self) -> str | None:
        """Why this server's view of etcd is not current (None: it is): the health check."""
        return self._problem

    # -- reads ------------------------------------------------------------------------------

    def current_revision(self) -> int:
        return self.cache.revision

    def compacted_revision(self) -> int:
        """As far as this server knows: another replica's compactor may have gone
        further, and etcd then answers the list Expired itself."""
        return self._compacted

    def get(self, key: bytes) -> Stored:
        return self.cache.get(key)

    def count(self, prefix: bytes) -> int:
        return self.cache.count(prefix)

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        return self.cache.get_list(prefix, options)

    def events_since(self, revision: int, prefix: bytes = b"") -> list[Event]:
        return self.cache.events_since(revision, prefix)

    def get_through(self, key: bytes) -> Deferred[Stored]:
        """A consistent get from etcd itself (when ``reads_through``)."""
        return ensureDeferred(self._through.get(key))

    def get_list_through(self, prefix: bytes, options: ListOptions) -> Deferred[ListResult]:
        """A consistent list from etcd itself (when ``reads_through``)."""
        return ensureDeferred(self._through.get_list(prefix, options))

    def consistent_revision(self) -> Deferred[int]:
        """etcd's current revision (a quorum read): a consistent read waits until the
        cache has it, as kube's consistent reads from its watch cache do.  Readers share
        quorum reads (batch.py)."""
        return self._revisions(None)

    def wait_for_revision(self, revision: int) -> Deferred[None]:
        """Fires once the cache has ``revision``; a progress notification is asked for
        meanwhile, in case no event in the watched prefix will ever bring it there."""
        arrived = self.cache.wait_for(revision)
        if not arrived.called:
            self._progress.request()
        return arrived

    async def _quorum_revisions(self, readers: list[None]) -> list[int]:
        result = await storage_call(COMPACT_KEY, self.client.range(COMPACT_KEY, count_only=True))
        return [int(result.revision)] * len(readers)

    # -- writes -----------------------------------------------------------------------------

    async def _written(self, key: bytes, obj: dict[str, Any], revision: int) -> Stored:
        """Once the cache has the write: what the registry returns for it (what the cache
        holds, unless a later write replaced it already)."""
        await self.cache.wait_for(revision)
        stored = self.cache.data.get(key)
        if stored is not None and stored.revision == revision:
            return stored
        set_revision(obj, str(revision))
        return Stored(key, revision, object_json(obj))

    async def create(self, key: bytes, obj: dict[str, Any]) -> Stored:
        with spans.opened("Create etcd3", span_fields(self.layout, key, obj.get("kind", ""))):
            return await self._create(key, obj, update=False)

    async def _create(self, key: bytes, obj: dict[str, Any], *, update: bool) -> Stored:
        etcd_key, value, size = self.values.encode(key, obj, 0)
        with self.values.writing(key, value, obj):
            create = self.client.create(etcd_key, value)
            result = await transaction(key, create, update)
            if not result.succeeded:
                raise StorageError(KEY_EXISTS, key)
            written = await self._written(key, obj, result.revision)
            spans.event("decode succeeded", len=size)
            return written

    async def guaranteed_update(
        self,
        key: bytes,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
    ) -> Stored:
        current: Stored | None = self.cache.data.get(key)
        fresh = False  # whether ``current`` was read from etcd rather than the cache
        kind = kind_of(current) if spans.TRACE.get() else ""  # decoded only for a traced write
        with spans.opened("GuaranteedUpdate etcd3", span_fields(self.layout, key, kind)):
            if current is None:  # as kube's: nothing cached, so etcd's (another replica's)
                current, fresh = await self._fresh(key), True
                if current is not None and spans.TRACE.get():
                    kind = kind_of(current)
                    spans.attribute("type", span_type(self.layout, key, kind))
            spans.event("initial value restored")
            while True:
                if current is None and not ignore_not_found:
                    raise StorageError(KEY_NOT_FOUND, key)
                new = await next_state(key, current, try_update, preconditions)
                if new is None:
                    assert current is not None
                    if fresh:
                        return current
                    # As kube's: nothing to write by the cache, so ask etcd, whose value
                    # may be newer, or stale (an older encryption key) and then written.
                    cached, current, fresh = current, await self._fresh(key), True
                    if _same_and_current(current, cached):
                        return cached  # (kube runs the update again; its answer is this)
                    continue
                if current is None:
                    if not kind:  # named once there is an object, as kube's decodes into one
                        spans.attribute("type", span_type(self.layout, key, new.get("kind", "")))
                    try:
                        return await self._create(key, new, update=True)
                    except StorageError as e:
                        if e.code != KEY_EXISTS:
                            raise
                    current, fresh = await self._fresh(key), True
                    spans.event("Retry value restored")
                    continue
                etcd_key, value, size = self.values.encode(key, new, current.revision)
                with self.values.writing(key, value, new):
                    update = self.client.update(etcd_key, value, current.revision)
                    result = await transaction(key, update, True)
                    if result.succeeded:
                        written = await self._written(key, new, result.revision)
                        spans.event("decode succeeded", len=size)
                        return written
                # Lost a race: the transaction returned the key as it is now.
                current = self.values.stored(result.current) if result.current else None
                fresh = True
                spans.event("Retry value restored")

    async def _fresh(self, key: bytes) -> Stored | None:
        kv = await storage_call(key, self.client.get(self.layout.etcd_key(key)))
        return self.values.stored(kv) if kv is not None else None

    async def delete(
        self,
        key: bytes,
        *,
        preconditions: Preconditions | None = None,
        validate: ValidateDeletion | None = None,
    ) -> Stored:
        current = self.cache.data.get(key)
        if current is None:  # as kube's: nothing cached, so etcd's (another replica's write)
            current = await self._fresh(key)
        while True:
            if current is None:
                raise StorageError(KEY_NOT_FOUND, key)
            if isinstance(current, Unreadable):
                raise current.error  # kube's delete decodes what it deletes; unsafe delete does not
            if preconditions is not None:
                why = preconditions.failure(current.object)
                if why:
                    raise StorageError(INVALID_OBJECT, key, why)
            if validate is not None:
                validate(current.object)
            etcd_key = self.layout.etcd_key(key)
            result = await storage_call(key, self.client.delete_at(etcd_key, current.revision))
            if result.succeeded:
                await self.cache.wait_for(result.revision)
                return deleted_at(current, result.revision)
            current = self.values.stored(result.current) if result.current is not None else None

    async def delete_corrupt(self, key: bytes, stand_in: dict[str, Any]) -> None:
        """Delete a value that does not decode; every replica's watchers see ``stand_in``
        deleted (kube's unsafe delete; standins.py).  The stand-in's note is removed once
        this replica's cache has the delete."""
        current = self.cache.get(key)
        etcd_key = self.layout.etcd_key(key)
        guard = Compare(etcd_key, "MOD", current.revision)
        change = self._stand_ins.delete_ops(etcd_key, stand_in)
        result = await storage_call(key, self.client.txn([guard], change))
        if not result.succeeded:
            raise StorageError(CONFLICT, key)
        await self.cache.wait_for(result.revision)
        note = self._stand_ins.note_key(etcd_key)
        try:
            await self.client.delete(note)
        except EtcdError:  # left behind: nothing reads it but the next such delete
            log.warn("an unsafe delete's stand-in was left in etcd at {note!r}", note=note)

    # -- compaction ---------------------------------------------------------------------------

    def compact(self, older_than: float) -> Deferred[int]:
        """Lists from before the window expire here, as the leader's compaction expires
        them in etcd (every replica trims; watches keep each resource's history)."""
        return succeed(self.cache.trim(self._clock() - older_than))

    def mark_compaction(self) -> Deferred[int]:
        return ensureDeferred(self._mark())

    async def _mark(self) -> int:
        """kube's compactor tick: write ``compact_rev_key`` (the revision moves on) and
        compact etcd to the previous tick's revision; lists below it expire."""
        previous = self._last_mark
        put = await self.client.put(COMPACT_KEY, str(previous).encode())
        self._last_mark = put.revision
        if previous:
            with contextlib.suppress(Compacted):  # another replica compacted further already
                await self.client.compact(previous)
            self._compacted = max(self._compacted, previous)
            self.cache.expire_below(previous)
        return previous


def _same_and_current(read: Stored | None, cached: Stored) -> bool:
    """Whether etcd holds the cached revision, written the way this server writes now."""
    return type(read) is Stored and read.revision == cached.revision
