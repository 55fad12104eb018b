"""Every unary call's deadline on one reactor timer.

A timer per call cost each etcd write a ``callLater`` and a ``cancel``: a heap insertion
with Python comparisons, and the reactor's upkeep of the cancelled calls (~2% of an etcd
create's CPU).  A transport's calls share one timeout, so their deadlines come in the
order the calls start: a queue whose head is always the soonest.  One timer waits for
the head; a call that finished stays queued until it reaches the head or the timer
fires, and is then dropped without a word.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from platform_api.timers import timer_clock


class Expiring(Protocol):
    """A call with a deadline: whether it is over, and what ends it at the deadline."""

    def over(self) -> bool: ...

    def expire(self) -> None: ...


class Deadlines:
    """The deadlines of calls that all take ``timeout`` seconds."""

    def __init__(self, reactor: Any, timeout: float) -> None:
        self.reactor = reactor
        self.clock = timer_clock(reactor)
        self.timeout = timeout
        self._queue: deque[tuple[float, Expiring]] = deque()
        self._timer: Any = None

    def add(self, call: Expiring, started: float) -> None:
        """``call.expire()`` at ``started + timeout`` (on ``timer_clock``) unless it is
        over by then."""
        queue = self._queue
        while queue and queue[0][1].over():  # finished calls at the head: gone now
            queue.popleft()
        queue.append((started + self.timeout, call))
        if self._timer is None:
            self._timer = self.reactor.callLater(self.timeout, self._fire)

    def _fire(self) -> None:
        self._timer = None
        queue, now = self._queue, self.clock()
        while queue and (queue[0][0] <= now or queue[0][1].over()):
            _, call = queue.popleft()
            if not call.over():
                call.expire()
        if queue:
            self._timer = self.reactor.callLater(max(0.0, queue[0][0] - now), self._fire)

    def stop(self) -> None:
        """Forget every deadline (the transport is closing: its calls end otherwise)."""
        self._queue.clear()
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def __len__(self) -> int:
        return len(self._queue)
