"""A controller that can also queue a key at a later time (kube's ``AddAfter``).

Returning a retry delay from ``sync`` holds the key scheduled, so a change arriving
meanwhile would wait for the delay.  Controllers that wait for a deadline (a token's
expiry, a Job's TTL) instead keep one timer per key, the earliest wins, and events
still queue the key at once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from twisted.internet.interfaces import IDelayedCall

from platform_api.controllers.base import Controller


class TimedController(Controller):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._timers: dict[Hashable, IDelayedCall] = {}

    def now(self) -> float:
        """Seconds since the epoch, from the injected reactor (a Clock in tests)."""
        return float(self.reactor.seconds())

    def enqueue_after(self, key: Hashable, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds unless an earlier timer is set."""
        if not self.running:
            return
        due = self.now() + delay
        timer = self._timers.get(key)
        if timer is not None and timer.active():
            if timer.getTime() <= due:
                return
            timer.cancel()
        self._timers[key] = self.reactor.callLater(delay, self._due, key)

    def cancel_timer(self, key: Hashable) -> None:
        """Drop ``key``'s timer: a later ``enqueue_after`` sets it afresh, even later."""
        timer = self._timers.pop(key, None)
        if timer is not None and timer.active():
            timer.cancel()

    def _due(self, key: Hashable) -> None:
        self._timers.pop(key, None)
        self.enqueue(key)

    def stop(self) -> None:
        super().stop()
        for timer in self._timers.values():
            if timer.active():
                timer.cancel()
        self._timers.clear()
