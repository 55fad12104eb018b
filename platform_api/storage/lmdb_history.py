"""A list at a past revision, from the LMDB change log (kube's exact-revision lists and
continue tokens): the keys changed since the target revision, as they were then, merged
into the current objects from the chunk's first key on.  A chunk costs its own objects and
the changes since, not the whole prefix: a paged list that reads on while writes go on
reads each chunk at its first chunk's revision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import lmdb

from platform_api.storage.chunks import as_of, select, single
from platform_api.storage.interface import ListOptions, ListResult, Stored
from platform_api.storage.lmdb_commit import REV, decode_log
from platform_api.storage.transformer import ValueTransformer, read, read_logged


def split(raw: bytes) -> tuple[int, bytes]:
    """An object record: its revision and its value."""
    return REV.unpack_from(raw)[0], raw[8:]


def list_at(
    txn: lmdb.Transaction,
    dbs: tuple[Any, Any],
    transformer: ValueTransformer | None,
    prefix: bytes,
    newest: int,
    options: ListOptions,
    known: int | None = None,
) -> ListResult:
    """The chunk ``options`` asks for of ``prefix`` as it was at ``options.revision``
    (``newest`` is now), in key order after ``options.start_after``; ``known``, when not
    None, is how many keys followed ``start_after`` then."""
    objects, log = dbs
    target = options.revision
    then = _changed_since(txn, log, transformer, prefix, options.start_after, newest, target)

    def lookup(key: bytes) -> Stored | None:
        if key in then:
            return then[key]
        raw: bytes | None = txn.get(key, db=objects)  # type: ignore[assignment]
        return None if raw is None else read(transformer, key, *split(raw))

    def existing(key: bytes) -> Stored:
        stored = lookup(key)
        assert stored is not None  # a key of as_of's: current, or one that existed then
        return stored

    if options.single:
        return single(lookup(prefix), options, target)
    keys = as_of(_keys(txn, objects, prefix, options.start_after), then)
    return select(keys, known, existing, options, target)


def _changed_since(
    txn: lmdb.Transaction,
    log: Any,
    transformer: ValueTransformer | None,
    prefix: bytes,
    after: bytes,
    newest: int,
    target: int,
) -> dict[bytes, Stored | None]:
    """Each key under ``prefix`` past ``after`` changed after ``target``: its state at
    ``target`` (None: it did not exist), from the oldest change after it."""
    then: dict[bytes, Stored | None] = {}
    cursor = txn.cursor(db=log)
    if cursor.set_key(REV.pack(newest)) or cursor.last():
        record: bytes
        for raw_rev, record in cursor.iterprev():  # type: ignore[assignment]
            revision = REV.unpack(raw_rev)[0]
            if revision <= target:
                break
            event, _ = decode_log(revision, record)
            if event.key.startswith(prefix) and event.key > after:
                then[event.key] = read_logged(transformer, event.prev)
    return then


def _keys(txn: lmdb.Transaction, objects: Any, prefix: bytes, after: bytes) -> Iterator[bytes]:
    """The current keys under ``prefix`` past ``after``, in order."""
    cursor = txn.cursor(db=objects)
    if not cursor.set_range(max(prefix, after + b"\x00") if after else prefix):
        return
    key: bytes
    for key in cursor.iternext(keys=True, values=False):  # type: ignore[assignment]
        if not key.startswith(prefix):
            return
        yield key
