"""One resource's recent events in the watch cache, sized as kube's watch cache sizes it.

kube keeps a history per resource (``watchCacheHistory`` in kubernetes/apiserver's
cacher), so a busy resource (Events, Leases) cannot push every other resource's history
out: a quiet resource's watchers can come back from any resourceVersion since the
cache was filled, however many writes the busy ones take.  Its size follows the load:
it starts at ``LOWER_CAPACITY`` events; when full, it doubles (up to
``UPPER_CAPACITY``) while its oldest event is younger than ``EVENT_FRESH_DURATION``,
and halves (not below the lower bound) once the newest quarter reaches back past that
duration; otherwise the oldest event gives way to the new one.  So each resource keeps
its writes of the last 75 s at least, and a quiet one keeps its last hundred for good.

Events are kept in a list read from ``_start`` on (dropping the oldest moves an index;
the list is cut down once half of it is dropped), so a watch from a revision bisects
instead of scanning.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from platform_api.storage.interface import Event

LOWER_CAPACITY = 100  # kube's defaultLowerBoundCapacity
UPPER_CAPACITY = 100 * 1024  # kube's defaultUpperBoundCapacity
EVENT_FRESH_DURATION = 75.0  # seconds: kube's DefaultEventFreshDuration (bookmarks + 15 s)


class ResourceHistory:
    """Events of one resource, oldest first, every one after ``floor`` (a watch from
    before it is Expired: kube's "too old resource version: rv (floor)")."""

    def __init__(
        self,
        floor: int,
        lower: int = LOWER_CAPACITY,
        upper: int = UPPER_CAPACITY,
        fresh: float = EVENT_FRESH_DURATION,
    ) -> None:
        self.floor = floor
        self.capacity = lower
        self._lower, self._upper, self._fresh = lower, upper, fresh
        self._events: list[Event] = []
        self._revisions: list[int] = []  # of each event, for bisecting
        self._times: list[float] = []  # when each arrived (the cache's clock)
        self._start = 0  # events before this index are dropped

    def __len__(self) -> int:
        return len(self._events) - self._start

    def add(self, event: Event, now: float) -> None:
        self._resize(now)
        if len(self) >= self.capacity:
            self._drop(len(self) - self.capacity + 1)
        self._events.append(event)
        self._revisions.append(event.revision)
        self._times.append(now)

    def since(self, revision: int) -> list[Event]:
        """Events after ``revision``; the caller has checked it is not below ``floor``."""
        at = bisect.bisect_right(self._revisions, revision, lo=self._start)
        return self._events[at:]

    def newest_first(self) -> Iterator[Event]:
        return (self._events[i] for i in range(len(self._events) - 1, self._start - 1, -1))

    def _resize(self, now: float) -> None:
        """kube's resizeCacheLocked, before each new event."""
        if len(self) < self.capacity:
            return
        if now - self._times[self._start] < self._fresh:
            self.capacity = min(self.capacity * 2, self._upper)
        elif now - self._times[len(self._events) - self.capacity // 4] > self._fresh:
            self.capacity = max(self.capacity // 2, self._lower)
            if len(self) > self.capacity:
                self._drop(len(self) - self.capacity)

    def _drop(self, count: int) -> None:
        self._start += count
        if self._start < len(self._events):  # kube's oldest-1: from just before it on
            self.floor = max(self.floor, self._revisions[self._start] - 1)
        else:
            self.floor = max(self.floor, self._revisions[-1])
        if self._start * 2 >= len(self._events):  # amortised: each event moves once
            del self._events[: self._start]
            del self._revisions[: self._start]
            del self._times[: self._start]
            self._start = 0
