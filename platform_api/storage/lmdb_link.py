"""A server's side of a link to an LMDB writer, whatever carries the frames.

``FramedWriter`` is the ``WriterChannel`` an ``LMDBStorage`` sends its writes to: the
ops of one reactor turn go out as one frame (lmdb_wire.py), outcomes come back in order,
and their events are published before their callers resume, as the in-process writer
does.  When the link breaks, the writes it carried are answered with an error (their
outcome is unknown, as a write to an etcd that stopped answering) and the commits whose
outcome was lost are read back from the change log, so watchers miss none; writes
queued meanwhile wait for the next link.

Two links: a writer process of this server's own on pipes (lmdb_process.py), or the
writer a ``--workers`` supervisor runs for all its workers, on a Unix socket
(lmdb_connection.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.logger import Logger

from platform_api.storage.interface import UNREACHABLE, Event, StorageError
from platform_api.storage.lmdb_commit import Op
from platform_api.storage.lmdb_store import Deliver
from platform_api.storage.lmdb_wire import FrameReader, decode_outcome, encode_ops

log = Logger()


class FramedWriter:
    """Frames out, outcomes in; subclasses carry the bytes (``_write``, ``linked``)."""

    def __init__(self, reactor: Any) -> None:
        self._reactor = reactor
        self._deliver: Deliver | None = None
        self._events_since: Callable[[int], list[Event]] | None = None
        self._outbox: list[Op] = []
        self._sent: dict[int, list[Op]] = {}
        self._seq = 0
        self._revision = 0  # the newest commit the writer reported
        self._reader = FrameReader()
        self._flush_call: IDelayedCall | None = None
        self._stopping = False
        # Called when an outcome tells of commits newer than its own events (the other
        # workers', from the shared writer): this worker's change log has news.
        self.on_news: Callable[[], None] | None = None

    def attach(
        self, deliver: Deliver, events_since: Callable[[int], list[Event]], revision: int
    ) -> None:
        self._deliver, self._events_since = deliver, events_since
        self._revision = revision

    @property
    def linked(self) -> bool:
        """Whether frames can go out now (else they wait in the outbox)."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        """The storage health check: a writer is there to commit."""
        return self.linked

    def _write(self, data: bytes) -> bool:
        """Send ``data``; False when the link broke before any of it went out."""
        raise NotImplementedError

    def _abort(self) -> None:
        """Break the link: what came back cannot be read."""
        raise NotImplementedError

    def stop(self) -> Deferred[None]:
        """End the link (writes still in flight are answered as lost); fires once done."""
        raise NotImplementedError

    # -- writes ----------------------------------------------------------------------

    def submit(self, ops: list[Op]) -> None:
        self._outbox += ops
        self._schedule()

    def _schedule(self) -> None:
        if self._flush_call is None and self.linked:
            self._flush_call = self._reactor.callLater(0, self._flush)

    def _flush(self) -> None:
        """The turn's writes, as one frame: the writer commits them together."""
        self._flush_call = None
        if not self.linked or not self._outbox:
            return
        ops, self._outbox = self._outbox, []
        try:
            frame = encode_ops(self._seq + 1, ops)
        except (ValueError, TypeError) as e:  # a value JSON cannot carry: these writes fail
            if self._deliver is not None:
                failed = [
                    StorageError(UNREACHABLE, op.key, f"storage write failed: {e}") for op in ops
                ]
                self._deliver(failed, [], ops)
            return
        self._seq += 1
        self._sent[self._seq] = ops
        if not self._write(frame):
            # The writer is gone and read nothing of this frame: its writes wait for
            # the next writer instead of failing.
            self._outbox[:0] = self._sent.pop(self._seq)

    # -- outcomes ------------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        try:
            answered = [self._answered(payload) for payload in self._reader.feed(data)]
        except Exception:
            # Not what the writer sends: end the link; its writes are answered as lost.
            log.failure("an unreadable answer from the LMDB writer")
            self._abort()
            return
        news = False
        for results, events, ops, newest in answered:
            if events:
                self._revision = events[-1].revision
            news = news or newest > self._revision
            if self._deliver is not None and (results or events):
                self._deliver(results, events, ops)
        if news and self.on_news is not None:
            self.on_news()

    def _answered(self, payload: Any) -> tuple[list[Any], list[Event], list[Op], int]:
        """One outcome: the results, the events, the ops they answer, the newest commit."""
        events, replies, newest = decode_outcome(payload)
        for seq, answers in replies:
            if len(answers) != len(self._sent[seq]):  # checked before any is taken
                raise ValueError(f"{len(answers)} results for {len(self._sent[seq])} writes")
        results: list[Any] = []
        ops: list[Op] = []
        for seq, answers in replies:
            results += answers
            ops += self._sent.pop(seq)
        return results, events, ops, newest

    def _link_lost(self, why: str) -> None:
        """The link broke: answer what it carried, and start reading afresh."""
        self._reader = FrameReader()
        lost, self._sent = [op for ops in self._sent.values() for op in ops], {}
        self._answer_lost(lost, why)

    def _answer_lost(self, lost: list[Op], why: str) -> None:
        """Fail the writes in flight and publish what committed of them anyway."""
        missed: list[Event] = []
        if self._events_since is not None and not self._stopping:  # (the env may be closed)
            try:
                missed = self._events_since(self._revision)
            except Exception:
                log.failure("reading the change log after the LMDB writer went away")
        if missed:
            self._revision = missed[-1].revision
        errors: list[Any] = [
            StorageError(UNREACHABLE, op.key, f"{why}; the write's outcome is unknown")
            for op in lost
        ]
        if self._deliver is not None and (missed or lost):
            self._deliver(errors, missed, lost)
