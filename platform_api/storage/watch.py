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
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.storage.interface import Event, Storage

log = Logger()
# How often the change log is checked for revisions other processes committed.
POLL_INTERVAL = 0.01


class Subscriber(Protocol):
    """A watcher as the hub sees it: a key prefix and somewhere to put events."""

    prefix: bytes

    def deliver(self, event: Event) -> None: ...


class WatchHub:
    def __init__(self, storage: Storage, reactor: IReactorTime) -> None:
        self._storage = storage
        self._reactor = reactor
        self._subscribers: list[Subscriber] = []
        self.revision = storage.current_revision()
        self._waiters: list[tuple[int, Deferred[None]]] = []
        self._poller = LoopingCall(self.catch_up)
        self._poller.clock = reactor

    def start(self) -> None:
        if not self._poller.running:
            self._poller.start(POLL_INTERVAL, now=False)

    def stop(self) -> None:
        if self._poller.running:
            self._poller.stop()

    # -- feeds ------------------------------------------------------------------------

    def committed(self, events: list[Event]) -> None:
        """Own commits, straight from the writer; fills any gap from the log first."""
        if not events:
            return
        if events[0].revision > self.revision + 1:
            self.catch_up()
        self._publish([e for e in events if e.revision > self.revision])

    def catch_up(self) -> None:
        """Deliver revisions other processes committed since the last delivered one."""
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
        for event in events:
            self.revision = event.revision
            for subscriber in list(self._subscribers):
                if event.key.startswith(subscriber.prefix):
                    try:
                        subscriber.deliver(event)
                    except Exception:
                        log.failure("delivering a watch event")
        if events:
            self._wake()

    # -- subscribers ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def history(self, after: int, prefix: bytes) -> list[Event]:
        """Events after ``after`` up to the hub's position (raises EXPIRED if compacted)."""
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
