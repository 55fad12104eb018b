"""How current a read is: the resourceVersion rules' waits, shared by the verb handlers.

A read with no resourceVersion must see every write made before it, through any worker
or replica; one with a resourceVersion must see at least that revision.  LMDB's reads are
current once the watch hub has delivered a revision; etcd's watch cache first learns
etcd's current revision and waits for its watch to bring it there, or (an etcd whose
progress notifications cannot be trusted, or a cache that did not catch up in time)
leaves the read to etcd, as kube's cacher does.  Reads that wait are timed as kube's
``apiserver_watch_cache_read_wait_seconds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import CancelledError
from twisted.internet.interfaces import IReactorTime

from platform_api import errors
from platform_api.apiserver.watchcachemetrics import read_waited
from platform_api.registry.store import Store
from platform_api.storage.interface import (
    Storage,
    StorageError,
    Stored,
    reads_history,
    reads_through,
)
from platform_api.storage.watch import WatchHub


class Freshness:
    """The read-freshness half of ``Handlers`` (scope.py), which holds these parts."""

    if TYPE_CHECKING:
        storage: Storage
        hub: WatchHub
        reactor: IReactorTime
        too_large_rv_wait: float  # seconds a read of a future revision waits before 504

    @property
    def cache_serves_current_reads(self) -> bool:
        """Whether reads with no resourceVersion are served from a cache once it has the
        database's current revision (etcd whose progress notifications can be trusted);
        otherwise they are current already (LMDB) or go to the database (older etcd)."""
        return hasattr(self.storage, "consistent_revision") and reads_through(self.storage) is None

    async def consistent_read(self, prefix: bytes = b"", *, fallback: bool = False) -> bool:
        """Before a read with no resourceVersion (kube: the newest state, a quorum read):
        a storage that serves reads from a cache (etcd's) first learns the current
        revision and waits until its cache has it.  LMDB's reads are current already;
        one whose cache cannot prove that reads from the database itself instead.

        Whether the cache may serve the read: with ``fallback``, a cache that has not
        caught up in time leaves the read to the database that holds every revision
        (etcd), as kube's consistent list falls back; otherwise that is a 504.  A read
        of ``prefix`` that waits is timed (kube's read wait)."""
        if not self.cache_serves_current_reads:
            return True
        try:
            revision = await self.storage.consistent_revision()  # type: ignore[attr-defined]
        except StorageError as e:  # etcd unreachable: the Status a write would get
            raise errors.internal_error(e) from None
        if fallback and reads_history(self.storage) is not None:
            return await self._reached(revision, prefix)
        await self.wait_for_revision(revision, prefix=prefix)
        return True

    async def current(self, store: Store, namespace: str, name: str) -> Stored:
        """An object as a get without resourceVersion reads it, as kube's handlers look
        up what a request names (its SA for a token, a pod to evict): from the cache once
        it has etcd's current revision, else from etcd; another replica may just have
        written it."""
        fresh = await self.consistent_read(store.prefix, fallback=True)
        return await store.read(namespace, name, consistent=True, stale=not fresh)

    async def caught_up(self) -> None:
        """Take in every change committed before now (as ``consistent_read`` learns it)
        before answering from what this server holds in memory alone, such as the kinds
        it serves: another worker or replica may have just defined one (kube's CRD
        handler holds creates in the 2 s after a definition is established for this).
        A storage that cannot answer leaves things as they are."""
        try:
            await self.consistent_read()
        except errors.StatusError:
            return
        self.hub.take_in()

    async def wait_for_revision(
        self, wanted: int, retry_after: int = 1, *, prefix: bytes = b""
    ) -> None:
        """Wait briefly for a revision another process may be committing, else 504."""
        if not await self._reached(wanted, prefix):
            raise errors.too_large_resource_version(
                wanted, self.storage.current_revision(), retry_after
            )

    async def _reached(self, wanted: int, prefix: bytes) -> bool:
        """Whether the storage reached ``wanted`` within ``too_large_rv_wait``.  A storage
        that reads from a cache (etcd's) waits for its cache itself; others' reads are
        current once the hub has delivered the revision.  A wait for a read of
        ``prefix`` is timed, however it ends."""
        if self.storage.current_revision() >= wanted:
            return True
        own = getattr(self.storage, "wait_for_revision", None)
        arrived = own(wanted) if own is not None else self.hub.wait_for(wanted)
        waited = False  # our wait ran out, rather than the request being cancelled

        def give_up() -> None:
            nonlocal waited
            waited = True
            arrived.cancel()

        started = self.reactor.seconds()
        timer = self.reactor.callLater(self.too_large_rv_wait, give_up)
        try:
            await arrived
            return True
        except CancelledError:
            if not waited:
                raise  # the request timed out (or its client left) first
            return False
        finally:
            if timer.active():
                timer.cancel()
            if prefix:
                read_waited(prefix, self.reactor.seconds() - started)
