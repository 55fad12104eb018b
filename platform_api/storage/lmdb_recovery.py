"""What the LMDB writer does when a write transaction fails (a mixin of LMDBStorage).

LMDB aborts the whole transaction, so nothing of a failed batch is written.  Then:

- MDB_MAP_RESIZED (another process grew the map): map the new size, run it again;
- MDB_MAP_FULL below the batch's limit: grow the map and run it again.  The limit is the
  quota when the batch creates or updates, the ceiling (``--lmdb-map-size``) when it only
  deletes or compacts: those run in the reserve, so room can be freed once full;
- otherwise (at the limit, or a disk error): run its ops in a transaction each, so the
  ops that still fit succeed and only the others answer the Status.  That run stops
  (``_Stalled``) where an op needs the map grown or remapped; that op runs alone after
  the remap, and the rest goes first into the next batch.

Remaps run here, on the reactor thread, between batches: no transaction is open then
(lmdb_space.py says why that matters).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import lmdb
from twisted.logger import Logger

from platform_api.storage.interface import Event
from platform_api.storage.lmdb_space import MapSpace

log = Logger()
_RETRIES = 64  # remaps for one batch: doubling reaches any ceiling well before
Outcome = tuple[list[Any], list[Event]]


class _Stalled(Exception):
    """A run of one transaction per op stopped at an op that needs a remap first."""

    def __init__(self, results: list[Any], events: list[Event], error: lmdb.Error) -> None:
        super().__init__(str(error))
        self.results = results
        self.events = events
        self.error = error


class WriteRecovery:
    """Grow, remap or split a failed batch; the store provides the commit and delivery."""

    _space: MapSpace
    _busy: bool
    _pending: deque[Any]
    _run_in_writer: Callable[[Callable[[], Any]], Any]
    _RESERVE_KINDS: frozenset[int] = frozenset()  # op kinds that may use the reserve

    def _commit(self, batch: list[Any]) -> Outcome:
        raise NotImplementedError

    def _committed(self, outcome: Outcome, batch: list[Any]) -> None:
        raise NotImplementedError

    def _deliver(self, results: list[Any], events: list[Event], batch: list[Any]) -> None:
        raise NotImplementedError

    def _kick(self) -> None:
        raise NotImplementedError

    def _limit(self, op: Any) -> int:
        return self._space.ceiling if op.kind in self._RESERVE_KINDS else self._space.quota

    def _batch_failed(self, failure: Any, batch: list[Any], attempt: int = 0) -> None:
        error = failure.value
        if isinstance(error, _Stalled):
            # Deliver what committed; run the stalled op alone once there is room (a delete
            # may widen the map into the reserve: the rest waits for the map to narrow).
            done = len(error.results)
            self._deliver(error.results, error.events, batch[:done])
            self._pending.extendleft(reversed(batch[done + 1 :]))
            batch, error = batch[done : done + 1], error.error
            if attempt < _RETRIES and self._space.recover(error, self._limit(batch[0])):
                self._rerun(batch, self._commit_each, attempt + 1)
                return
        elif attempt < _RETRIES:
            if self._space.recover(error, min(self._limit(op) for op in batch)):
                self._rerun(batch, self._commit, attempt + 1)
                return
            if isinstance(error, lmdb.Error) and len(batch) > 1:
                self._rerun(batch, self._commit_each, attempt + 1)
                return
        self._fail(failure, error, batch)

    def _fail(self, failure: Any, error: BaseException, batch: list[Any]) -> None:
        if isinstance(error, lmdb.Error):
            log.warn("LMDB write transaction failed: {error}", error=error)
        else:
            log.failure("LMDB write transaction failed", failure)
        try:
            for op in batch:
                op.deferred.errback(self._space.failure(error, op.key))
        finally:
            self._busy = False
            self._kick()

    def _rerun(
        self, batch: list[Any], commit: Callable[[list[Any]], Outcome], attempt: int
    ) -> None:
        d = self._run_in_writer(lambda: commit(batch))
        d.addCallback(self._committed, batch)
        d.addErrback(self._batch_failed, batch, attempt)

    def _commit_each(self, batch: list[Any]) -> Outcome:
        """Runs on the writer thread: each op in a transaction of its own."""
        results: list[Any] = []
        events: list[Event] = []
        for op in batch:
            try:
                done, more = self._commit([op])
            except lmdb.MapResizedError as e:
                raise _Stalled(results, events, e) from None
            except lmdb.Error as e:
                if isinstance(e, lmdb.MapFullError) and self._space.size() < self._limit(op):
                    raise _Stalled(results, events, e) from None
                done, more = [self._space.failure(e, op.key)], []
            results += done
            events += more
        return results, events
