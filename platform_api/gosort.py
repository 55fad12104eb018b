"""Go's ``sort.SliceStable``, step for step, for comparisons that are no ordering.

Where kube sorts with a ``less`` that is inconsistent (strategicpatch's element order
calls an item whose position is unknown "less" than anything, both ways round), the
result is whatever Go's algorithm makes of it: insertion sorts over blocks of 20, then
SymMerge of neighbouring blocks.  Python's sort with any key gives another order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_BLOCK = 20


def slice_stable(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """Sort ``items`` in place as ``sort.SliceStable(items, less)`` does."""
    n = len(items)
    a, b = 0, _BLOCK
    while b <= n:
        _insertion(items, less, a, b)
        a, b = b, b + _BLOCK
    _insertion(items, less, a, n)
    block = _BLOCK
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            _sym_merge(items, less, a, a + block, b)
            a, b = b, b + 2 * block
        if a + block < n:
            _sym_merge(items, less, a, a + block, n)
        block *= 2


def _insertion(items: list[Any], less: Callable[[Any, Any], bool], a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(items[j], items[j - 1]):
            items[j], items[j - 1] = items[j - 1], items[j]
            j -= 1


def _sym_merge(items: list[Any], less: Callable[[Any, Any], bool], a: int, m: int, b: int) -> None:
    """SymMerge (Kim and Kutzner) of the sorted runs items[a:m] and items[m:b]."""
    if m - a == 1:  # one item to insert into the right run
        i, j = m, b
        while i < j:
            h = (i + j) >> 1
            if less(items[h], items[a]):
                i = h + 1
            else:
                j = h
        for k in range(a, i - 1):
            items[k], items[k + 1] = items[k + 1], items[k]
        return
    if b - m == 1:  # one item to insert into the left run
        i, j = a, m
        while i < j:
            h = (i + j) >> 1
            if not less(items[m], items[h]):
                i = h + 1
            else:
                j = h
        for k in range(m, i, -1):
            items[k], items[k - 1] = items[k - 1], items[k]
        return
    mid = (a + b) >> 1
    n = mid + m
    start, r = (n - b, mid) if m > mid else (a, m)
    p = n - 1
    while start < r:
        c = (start + r) >> 1
        if not less(items[p - c], items[c]):
            start = c + 1
        else:
            r = c
    end = n - start
    if start < m < end:
        items[start:end] = items[m:end] + items[start:m]  # rotate: Go swaps blocks
    if a < start < mid:
        _sym_merge(items, less, a, start, mid)
    if mid < end < b:
        _sym_merge(items, less, mid, end, b)
