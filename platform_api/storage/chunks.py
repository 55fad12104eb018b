"""A list's chunk, the same way in every backend: the chunk of ordered keys a list
takes, the single object of a ``metadata.name`` list, and the keys of a past revision
(the current ones merged with those changed since, as they were then)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping

from platform_api.storage.interface import ListOptions, ListResult, Stored


def select(
    keys: Iterable[bytes],
    count: int | None,
    lookup: Callable[[bytes], Stored],
    options: ListOptions,
    revision: int,
) -> ListResult:
    """The chunk of a list: of ``keys`` (in order, past ``start_after`` already), up to
    ``limit`` objects that ``predicate`` keeps.  A chunk that stops early continues after
    its last object and, without a predicate, tells the keys left (kube's
    remainingItemCount): ``count`` less those read, or, with ``count`` None, counted
    from the keys not read."""
    items: list[Stored] = []
    keys = iter(keys)
    for i, key in enumerate(keys):
        if options.limit and len(items) >= options.limit:
            remaining = None
            if options.predicate is None:
                remaining = count - i if count is not None else 1 + sum(1 for _ in keys)
            return ListResult(items, revision, items[-1].key, remaining)
        stored = lookup(key)
        if options.selects(stored):
            items.append(stored)
    return ListResult(items, revision, None, None)


def single(found: Stored | None, options: ListOptions, revision: int) -> ListResult:
    """A ``single`` list (``ListOptions.single``): the one object, if it is there and
    the predicate keeps it."""
    items = [found] if found is not None and options.selects(found) else []
    return ListResult(items, revision, None, None)


def as_of(current: Iterable[bytes], then: Mapping[bytes, Stored | None]) -> Iterator[bytes]:
    """The keys of a past revision, in order: the ``current`` ones (in order) that did not
    change since, and those of ``then`` (each changed key's state at that revision;
    None, it did not exist) that existed."""
    unchanged = (key for key in current if key not in then)
    return heapq.merge(unchanged, sorted(key for key, was in then.items() if was is not None))
