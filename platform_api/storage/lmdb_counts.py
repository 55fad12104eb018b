"""How many objects each resource and each namespace of it holds, kept in LMDB.

Counting a prefix's keys walks them: ~130 ms a million keys, on the reactor.  The
server counts for every ``/metrics`` scrape (``apiserver_storage_objects``), for
priority and fairness' work estimates every ``--etcd-count-metric-poll-period``, and
for every paged list's ``remainingItemCount``.  So the commit keeps the counts: the
``counts`` database maps ``/<group>/<plural>/`` and ``/<group>/<plural>/<namespace>/``
to their number of objects, updated in the transaction that creates or deletes them.

``meta``'s ``counted`` is the revision the counts are true at; each commit moves it
with ``rev``.  Anything else that writes objects (an older release, ``migrate-storage``)
moves ``rev`` alone, so the counts are known stale: readers walk instead, and the next
open counts again (``recount``).
"""

from __future__ import annotations

import struct
from typing import Any

import lmdb

META_COUNTED = b"counted"
_N = struct.Struct(">Q")  # as every counter in ``meta``
_SLASH = 0x2F


def _int(txn: lmdb.Transaction, db: Any, name: bytes) -> int:
    raw = txn.get(name, db=db)
    return _N.unpack(raw)[0] if raw else 0


def counted_at(txn: lmdb.Transaction, meta: Any) -> int | None:
    """The revision the counts are true at; None before they were ever counted."""
    raw = txn.get(META_COUNTED, db=meta)
    return None if raw is None else int(_N.unpack(raw)[0])


def prefixes(key: bytes) -> tuple[bytes, ...]:
    """The counted prefixes a key is under: its resource's, and its namespace's if any."""
    parts = key.split(b"/", 4)
    if len(parts) < 4 or parts[0]:
        return ()
    resource = b"/%s/%s/" % (parts[1], parts[2])
    if len(parts) == 5:
        return resource, resource + parts[3] + b"/"
    return (resource,)


def countable(prefix: bytes) -> bool:
    """Whether ``prefix`` is a resource's or a namespace's, the prefixes kept counted."""
    return prefix.startswith(b"/") and prefix.endswith(b"/") and prefix.count(_SLASH) in (3, 4)


class Tally:
    """One commit's changes to the counts, written once at its end."""

    def __init__(self) -> None:
        self.changes: dict[bytes, int] = {}

    def add(self, key: bytes, delta: int) -> None:
        changes = self.changes
        for prefix in prefixes(key):
            changes[prefix] = changes.get(prefix, 0) + delta

    def write(self, txn: lmdb.Transaction, counts: Any, meta: Any, start: int, end: int) -> None:
        """Apply the changes and mark the counts true at ``end``, if they were true at
        ``start`` (the revision the transaction began at); stale counts stay stale."""
        if counted_at(txn, meta) != start:
            return
        for prefix, delta in self.changes.items():
            if not delta:
                continue
            n = _int(txn, counts, prefix) + delta
            if n > 0:
                txn.put(prefix, _N.pack(n), db=counts)
            else:
                txn.delete(prefix, db=counts)
        txn.put(META_COUNTED, _N.pack(end), db=meta)


def read(txn: lmdb.Transaction, counts: Any, meta: Any, prefix: bytes, revision: int) -> int | None:
    """The count of a countable ``prefix`` in ``txn``, whose revision is ``revision``;
    None while the counts are stale."""
    if counted_at(txn, meta) != revision:
        return None
    return _int(txn, counts, prefix)


def recount(txn: lmdb.Transaction, objects: Any, counts: Any, meta: Any, revision: int) -> int:
    """Count every object again in the write transaction ``txn`` (at ``revision``); how
    many there are, or -1 when the counts were true already (another process counted)."""
    if counted_at(txn, meta) == revision:
        return -1
    txn.drop(counts, delete=False)
    tally, total = Tally(), 0
    for key in txn.cursor(db=objects).iternext(keys=True, values=False):
        tally.add(bytes(key), 1)
        total += 1
    for prefix, n in tally.changes.items():
        txn.put(prefix, _N.pack(n), db=counts)
    txn.put(META_COUNTED, _N.pack(revision), db=meta)
    return total
