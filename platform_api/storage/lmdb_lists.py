"""LMDB's list chunks at the current revision, and how a chunk tells the keys left.

A chunk that stops early tells how many keys follow it (kube's remainingItemCount).
Walking them costs ~144 ns a key on the reactor, so a chunk takes the number from
what it already knows where it can: a first chunk from the kept counts
(lmdb_counts.py), a later chunk of a paged list from the chunk before it
(``KeysLeft``); it walks only when it knows neither.  Chunks at a past revision are
lmdb_history.py's.
"""

from __future__ import annotations

from typing import Any

import lmdb

from platform_api.storage.chunks import single
from platform_api.storage.interface import ListOptions, ListResult, Stored
from platform_api.storage.lmdb_history import split
from platform_api.storage.transformer import ValueTransformer, read

KEPT = 1024  # paged lists followed at once (an entry: ~200 bytes)


class KeysLeft:
    """The keys left after a chunk's last key, by (prefix, last key, revision): the next
    chunk of a paged list, at that revision from that key, counts from it.  A
    revision's state never changes, so an entry stays true; the oldest go first."""

    def __init__(self) -> None:
        self._left: dict[tuple[bytes, bytes, int], int] = {}

    def before(self, prefix: bytes, options: ListOptions) -> int | None:
        """How many keys follow ``options.start_after``, if a chunk before told."""
        if options.predicate is not None or not options.start_after or not options.limit:
            return None
        return self._left.get((prefix, options.start_after, options.revision))

    def note(self, prefix: bytes, result: ListResult) -> None:
        if result.remaining is None or result.continue_key is None:
            return
        if len(self._left) >= KEPT:
            del self._left[next(iter(self._left))]
        self._left[(prefix, result.continue_key, result.revision)] = result.remaining

    def clear(self) -> None:
        self._left.clear()


def keys_on(cursor: lmdb.Cursor, prefix: bytes) -> int:
    """The keys under ``prefix`` from the cursor's position on (it included)."""
    n = 0
    key: bytes
    for key in cursor.iternext(keys=True, values=False):  # type: ignore[assignment]
        if not key.startswith(prefix):
            break
        n += 1
    return n


def chunk(
    txn: lmdb.Transaction,
    objects: Any,
    transformer: ValueTransformer | None,
    prefix: bytes,
    options: ListOptions,
    revision: int,
    known: int | None,
) -> ListResult:
    """The chunk of ``prefix`` now (at ``revision``); ``known``, when not None, is how
    many keys follow ``options.start_after`` (all of them, without one).  Its own loop
    over the cursor's records rather than chunks.select over keys: a record read with
    its key, not looked up again, is ~9% of a chunk's read (every list comes here)."""
    if options.single:  # the one key, not those it prefixes
        raw: bytes | None = txn.get(prefix, db=objects)  # type: ignore[assignment]
        return single(
            None if raw is None else read(transformer, prefix, *split(raw)), options, revision
        )
    cursor = txn.cursor(db=objects)
    start = options.start_after + b"\x00" if options.start_after else prefix
    items: list[Stored] = []
    if cursor.set_range(max(start, prefix)):
        key: bytes
        value: bytes
        for key, value in cursor:  # type: ignore[assignment]
            if not key.startswith(prefix):
                break
            if options.limit and len(items) >= options.limit:
                if options.predicate is not None:
                    remaining = None
                elif known is not None:  # everything the chunk passed over, it returns
                    remaining = known - len(items)
                else:
                    remaining = keys_on(cursor, prefix)  # from the first key not returned
                return ListResult(items, revision, items[-1].key, remaining)
            stored = read(transformer, key, *split(value))
            if options.selects(stored):
                items.append(stored)
    return ListResult(items, revision, None, None)
