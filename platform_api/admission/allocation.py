"""Picking a free value (a Service's cluster IP or node port) as kube's allocators do:
from a random place in the range, not the lowest free one; and holding the values just
handed out until their Service is stored.

Under ``--workers N`` each worker allocates from its own share of the range first (the
values whose offset is its index modulo N): two workers admitting Services at the same
moment, before either is stored, would otherwise hand out the same value.  A worker
whose share is full takes any free value.  Replicas on etcd have no index; they rely on
the random start alone.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Container, Hashable, Iterable

Share = tuple[int, int]  # (this worker's index, the number of workers)
Owner = tuple[str, str]  # a Service's namespace and name


def pick_free(
    size: int, taken: Callable[[int], bool], share: Share = (0, 1), static: int = 0
) -> int | None:
    """A free offset in ``range(size)``, or None when every one is taken.  Offsets below
    ``static`` come only once every one above is taken: kube's static subrange of
    Service IPs and node ports, left for the values users name."""
    if static:
        upper = pick_free(size - static, lambda o: taken(static + o), share)
        return static + upper if upper is not None else pick_free(static, taken, share)
    if size <= 0:
        return None
    index, count = share
    start = random.randrange(size)
    for offset in range(size):
        candidate = (start + offset) % size
        if candidate % count == index and not taken(candidate):
            return candidate
    if count > 1:
        for offset in range(size):
            candidate = (start + offset) % size
            if not taken(candidate):
                return candidate
    return None


class Holds:
    """Values handed out moments ago, by their Service: admission runs before the write,
    so a concurrent create would not see them in storage yet.  Once its Service is
    stored (or deleted) a value is what storage says; a create that never landed lets
    its values go after ``seconds``."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds, self._clock = seconds, clock
        self._held: dict[Hashable, tuple[Owner, float]] = {}

    def hold(self, values: Iterable[Hashable], owner: Owner) -> None:
        now = self._clock()
        for value in values:
            self._held[value] = (owner, now)

    def release(self, owner: Owner) -> None:
        self._held = {v: held for v, held in self._held.items() if held[0] != owner}

    def pending(self, me: Owner, stored: Container[Owner]) -> set[Hashable]:
        """Values held for other Services not stored yet."""
        now = self._clock()
        self._held = {v: h for v, h in self._held.items() if now - h[1] < self._seconds}
        return {v for v, (owner, _) in self._held.items() if owner != me and owner not in stored}
