"""What every controller shares: a keyed work queue fed by the watch hub, with retries.

Each key is handled by one ``sync`` at a time; a key queued again while it is being
handled runs once more afterwards, and a sync asking for a retry is re-run later.
Controllers see the cluster through the registry stores (the same operations as the
REST API, with the server's own identity) and changes through the watch hub.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from platform_api.controllers.queuemetrics import QueueMetrics
from platform_api.errors import StatusError
from platform_api.registry.store import WRITER
from platform_api.storage.interface import Event
from platform_api.storage.watch import WatchHub
from platform_api.timers import timer_clock

log = Logger()


def current_object(store: Any, namespace: str, name: str) -> dict[str, Any] | None:
    """The object as stored now, or None when there is none (other errors raise): what a
    sync reads first.  Its own copy: syncs edit it, and the stored one is shared."""
    try:
        return store.get(namespace, name).copy()
    except StatusError as e:
        if e.code != 404:
            raise
        return None


def status_condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    """The object's ``status.conditions`` entry of a type (a pod's Ready, a Node's)."""
    for found in (obj.get("status") or {}).get("conditions") or ():
        if found.get("type") == type_:
            return found
    return None


class Controller:
    """A work queue of keys; subclasses implement ``observe`` and ``sync``."""

    name = "controller"
    prefix = b"/"
    # The field manager of its writes: kube-controller-manager's, or kube-apiserver's for
    # the controllers kube runs inside the API server.
    manager: str | None = "kube-controller-manager"  # None: the controller records its own
    # kube's work queue name, for the controllers kube runs inside kube-apiserver: its
    # ``workqueue_*`` series (queuemetrics.py).
    queue: str | None = None

    def __init__(self, hub: WatchHub, reactor: IReactorTime) -> None:
        self.hub = hub
        self.reactor = reactor
        self._metrics = QueueMetrics(self.queue, timer_clock(reactor)) if self.queue else None
        self._busy: set[Hashable] = set()
        self._again: dict[Hashable, float] = {}  # key -> the shortest delay asked for
        self._scheduled: dict[Hashable, IDelayedCall] = {}
        self.running = False

    def start(self) -> None:
        self.running = True
        watched = self.watched()
        if watched:
            self.hub.subscribe(self, under=watched)
        self.resync()

    def stop(self) -> None:
        self.running = False
        self.hub.unsubscribe(self)

    def resync(self) -> None:
        """Queue whatever needs work in the current state (at start)."""

    def watched(self) -> tuple[bytes, ...]:
        """The key prefixes whose events ``observe`` wants; the hub calls it with no
        others.  Empty: the controller polls and watches nothing."""
        return (self.prefix,)

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            try:
                self.observe(event)
            except Exception:
                log.failure("{name} observing an event", name=self.name)

    def observe(self, event: Event) -> None:
        raise NotImplementedError

    def enqueue(self, key: Hashable, delay: float = 0.0) -> None:
        """Queue ``key`` now (client-go's Add) or after ``delay`` seconds (AddAfter)."""
        if not self.running:
            return
        if self._metrics is not None:
            if delay > 0:
                self._metrics.retried()  # client-go counts every AddAfter so
            else:
                self._metrics.added(key)
        self._queue_key(key, delay)

    def _queue_key(self, key: Hashable, delay: float) -> None:
        if key in self._busy:  # run once more when done, no sooner than asked
            self._again[key] = min(delay, self._again.get(key, delay))
            return
        due = self.reactor.seconds() + delay
        scheduled = self._scheduled.get(key)
        if scheduled is not None:
            if scheduled.getTime() <= due:
                return
            scheduled.cancel()  # a periodic re-check is due later: run now instead
        self._scheduled[key] = self.reactor.callLater(delay, self._run, key)

    def _run(self, key: Hashable) -> None:
        self._scheduled.pop(key, None)
        if key in self._busy or not self.running:
            return
        if self._metrics is not None:
            self._metrics.added(key)  # a delayed key joins the queue as it comes due
            self._metrics.started(key)
        self._busy.add(key)
        d = ensureDeferred(self._sync_as_writer(key))
        d.addCallback(self._done, key)
        d.addErrback(self._failed, key)

    def _done(self, retry: float | None, key: Hashable) -> None:
        self._busy.discard(key)
        if self._metrics is not None:
            self._metrics.finished(key)
        if key in self._again:  # counted when it was queued again
            if self.running:
                self._queue_key(key, self._again.pop(key))
            else:
                self._again.pop(key)
        elif retry is not None:
            self.enqueue(key, retry)

    def _failed(self, failure: Any, key: Hashable) -> None:
        if failure.check(StatusError) and failure.value.code in (404, 409):
            # The object went away or changed under the sync (a Deployment deleted while
            # its status was being written): an ordinary race, retried as kube requeues
            # it; the retry reads the object afresh.
            log.info("{name} syncing {key}: {why}", name=self.name, key=key, why=failure.value)
        else:
            log.failure("{name} syncing {key}", failure, name=self.name, key=key)
        self._done(1.0, key)

    async def _sync_as_writer(self, key: Hashable) -> float | None:
        """``sync`` in a task of its own whose writes are recorded as this controller's
        (the variable is set in the task's copy of the context, not the caller's)."""
        WRITER.set(self.manager)
        return await self.sync(key)

    async def sync(self, key: Any) -> float | None:
        """Bring ``key`` closer to its desired state; a number asks for a retry after it."""
        raise NotImplementedError
