"""Picking a free value (a Service's cluster IP or node port) as kube's allocators do:
from a random place in the range, not the lowest free one.

Under ``--workers N`` each worker allocates from its own share of the range first (the
values whose offset is its index modulo N): two workers admitting Services at the same
moment, before either is stored, would otherwise hand out the same value.  A worker
whose share is full takes any free value.  Replicas on etcd have no index; they rely on
the random start alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable

Share = tuple[int, int]  # (this worker's index, the number of workers)


def pick_free(size: int, taken: Callable[[int], bool], share: Share = (0, 1)) -> int | None:
    """A free offset in ``range(size)``, or None when every one is taken."""
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
