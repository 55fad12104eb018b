"""The watch hub: every committed change, in revision order, fanned out to watchers.

Events come from two feeds that can interleave: this process's commits (delivered from
memory at once) and the LMDB change log, polled for revisions written by other
processes sharing the data directory.  The hub delivers each revision exactly once,
in order, whichever feed brings it first.  A watcher registers with the revision it
has seen; anything older than the hub's position is replayed from the change log.
"""

from __future__ import annotations

from typing import Protocol

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.storage.interface import Event, Storage

log = Logger()
# How often the change log is checked for revisions other processes committed.
POLL_INTERVAL = 0.01
# Commits are handed to watchers in rounds.  With few watch streams a round is cheap and
# goes out on the next reactor turn.  With many, a round costs each stream a write, a TLS
# record and a send (~40 us) however few events it holds, so it waits for more commits:
# FLUSH_DELAY, growing with the number of streams (PER_SUBSCRIBER each) up to
# MAX_FLUSH_DELAY, which bounds that fixed cost to about a fifth of the reactor's time.
# In-process subscribers (informers, controllers: a function call each) do not count:
# with them counted, a server running more controllers delayed every watch event.
# Measured with 1000 creates to 100 watchers: delivering at once was 25% slower than
# 5 ms rounds, and 20 ms rounds 10-25% faster.
FLUSH_DELAY = 0.005
PER_SUBSCRIBER = 0.0002
MAX_FLUSH_DELAY = 0.02
CHEAP_ROUND = 16  # watch streams
FLUSH_AT = 500  # pending events that trigger a round at once


def round_delay(streams: int) -> float:
    """How long a round gathers commits before it goes out to ``streams`` watch streams."""
    if streams <= CHEAP_ROUND:
        return 0.0
    return min(MAX_FLUSH_DELAY, max(FLUSH_DELAY, streams * PER_SUBSCRIBER))


class Subscriber(Protocol):
    """A watcher as the hub sees it: a key prefix and somewhere to put events."""

    prefix: bytes

    def deliver(self, events: list[Event]) -> None:
        """Events of one commit batch under ``prefix``, in revision order."""
        ...


class WatchHub:
    def __init__(self, storage: Storage, reactor: IReactorTime) -> None:
        self._storage = storage
        self._reactor = reactor
        self._subscribers: list[Subscriber] = []
        self._streams = 0  # subscribers that write to a client (see round_delay)
        self._streamed: set[int] = set()
        self.revision = storage.current_revision()
        self._waiters: list[tuple[int, Deferred[None]]] = []
        self._pending: list[Event] = []
        self._flush_call: IDelayedCall | None = None
        self._poller = LoopingCall(self.catch_up)
        self._poller.clock = reactor

    def start(self) -> None:
        if not self._poller.running:
            self._poller.start(POLL_INTERVAL, now=False)

    def stop(self) -> None:
        if self._poller.running:
            self._poller.stop()
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()

    # -- feeds ------------------------------------------------------------------------

    def committed(self, events: list[Event]) -> None:
        """Own commits, straight from the writer; delivered in the next round."""
        if not events:
            return
        self._pending.extend(events)
        if len(self._pending) >= FLUSH_AT:
            self.flush()
        elif self._flush_call is None:
            self._flush_call = self._reactor.callLater(round_delay(self._streams), self.flush)

    def flush(self) -> None:
        """Deliver pending commits in revision order, filling gaps from the log first."""
        if self._flush_call is not None:
            if self._flush_call.active():
                self._flush_call.cancel()
            self._flush_call = None
        pending, self._pending = self._pending, []
        if pending and not _follows(self.revision, pending):
            # Other processes committed before or between our batches: the change log has
            # every revision in order, ours included.
            self.catch_up()
        self._publish([e for e in pending if e.revision > self.revision])

    def catch_up(self) -> None:
        """Deliver revisions other processes committed since the last delivered one."""
        if self._pending and self._flush_call is not None:
            return  # a round is due: it fills any gap itself
        if self._storage.current_revision() <= self.revision:
            return
        try:
            events = self._storage.events_since(self.revision)
        except Exception:
            # Compacted past our position (a long stall): skip ahead; watchers that
            # needed the gap end with 410 and re-list, as kube's do.
            log.failure("watch hub fell behind the change log")
            self.revision = self._storage.current_revision()
            self._wake()
            return
        self._publish(events)

    def _publish(self, events: list[Event]) -> None:
        """One call per subscriber per batch, so a watcher writes a batch at once."""
        if not events:
            return
        self.revision = events[-1].revision
        by_prefix: dict[bytes, list[Event]] = {}
        for subscriber in list(self._subscribers):
            mine = by_prefix.get(subscriber.prefix)
            if mine is None:
                mine = [e for e in events if e.key.startswith(subscriber.prefix)]
                by_prefix[subscriber.prefix] = mine
            if mine:
                try:
                    subscriber.deliver(mine)
                except Exception:
                    log.failure("delivering watch events")
        self._wake()

    # -- subscribers ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber, streamed: bool = False) -> None:
        """``streamed``: the subscriber writes its events to a client (a watch request)."""
        self._subscribers.append(subscriber)
        if streamed:
            self._streamed.add(id(subscriber))
            self._streams = len(self._streamed)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)
            self._streamed.discard(id(subscriber))
            self._streams = len(self._streamed)

    def subscribers_under(self, prefix: bytes) -> list[Subscriber]:
        """Subscribers that watch ``prefix`` or part of it."""
        return [s for s in self._subscribers if s.prefix.startswith(prefix)]

    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def history(self, after: int, prefix: bytes) -> list[Event]:
        """Events after ``after`` up to the hub's position (raises EXPIRED if compacted)."""
        if after >= self.revision:  # a future revision (up to 2**64-1) has no history yet
            return []
        return [e for e in self._storage.events_since(after, prefix) if e.revision <= self.revision]

    # -- waiting for a revision ---------------------------------------------------------------

    def wait_for(self, revision: int) -> Deferred[None]:
        """Fires once the hub has delivered ``revision`` (cancel it to give up)."""
        d: Deferred[None] = Deferred(self._cancel_wait)
        if self.revision >= revision:
            d.callback(None)
        else:
            self._waiters.append((revision, d))
        return d

    def _cancel_wait(self, d: Deferred[None]) -> None:
        self._waiters = [(r, w) for r, w in self._waiters if w is not d]

    def _wake(self) -> None:
        if not self._waiters:
            return
        ready = [w for r, w in self._waiters if r <= self.revision]
        self._waiters = [(r, w) for r, w in self._waiters if r > self.revision]
        for d in ready:
            d.callback(None)


def _follows(revision: int, events: list[Event]) -> bool:
    """Whether ``events`` are exactly the revisions after ``revision``, none missing."""
    return all(e.revision == revision + 1 + i for i, e in enumerate(events))
