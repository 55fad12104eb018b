"""A list at a past revision, rebuilt from the LMDB change log (kube's exact-revision
lists and continue tokens): the current objects under a prefix, with every change after
the target revision undone, newest first."""

from __future__ import annotations

from typing import Any

import lmdb

from platform_api.storage.interface import ListOptions, ListResult, Stored
from platform_api.storage.lmdb_commit import REV, decode_log
from platform_api.storage.transformer import ValueTransformer, read, read_logged


def state_at(
    txn: lmdb.Transaction,
    dbs: tuple[Any, Any],
    transformer: ValueTransformer | None,
    prefix: bytes,
    newest: int,
    target: int,
) -> dict[bytes, Stored]:
    """Every object under ``prefix`` as it was at ``target`` (``newest`` is now)."""
    objects, log = dbs
    state: dict[bytes, Stored] = {}
    cursor = txn.cursor(db=objects)
    if cursor.set_range(prefix):
        key: bytes
        raw: bytes
        for key, raw in cursor:  # type: ignore[assignment]
            if not key.startswith(prefix):
                break
            state[key] = read(transformer, key, REV.unpack_from(raw)[0], raw[8:])
    log_cursor = txn.cursor(db=log)
    if log_cursor.set_key(REV.pack(newest)) or log_cursor.last():
        record: bytes
        for raw_rev, record in log_cursor.iterprev():  # type: ignore[assignment]
            revision = REV.unpack(raw_rev)[0]
            if revision <= target:
                break
            event, _ = decode_log(revision, record)
            if not event.key.startswith(prefix):
                continue
            if event.prev is None:
                state.pop(event.key, None)
            else:
                state[event.key] = read_logged(transformer, event.prev)
    return state


def page(state: dict[bytes, Stored], target: int, options: ListOptions) -> ListResult:
    """One page of ``state`` in key order, after ``options.start_after``."""
    keys = sorted(k for k in state if k > options.start_after)
    items: list[Stored] = []
    for i, key in enumerate(keys):
        if options.limit and len(items) >= options.limit:
            remaining = None if options.predicate else len(keys) - i
            return ListResult(items, target, items[-1].key, remaining)
        stored = state[key]
        if options.selects(stored):
            items.append(stored)
    return ListResult(items, target, None, None)
