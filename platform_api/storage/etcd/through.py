"""Consistent reads from etcd itself, when etcd's progress notifications cannot be trusted.

A consistent read from the watch cache learns etcd's current revision and waits until a
progress notification says the cache has it.  Before 3.5.13 (3.4.31 on the 3.4 line) etcd
could send that notification ahead of events it covered (etcd-io/etcd#15220, fixed in
3.5.8, and #17507), so such a read could miss a write another replica had just made.
kube checks etcd's version and, on those, serves consistent lists from etcd rather than
from its cache; it serves every consistent get from etcd.  This server does both on such
an etcd, and reads the later chunks of such a list there too: the cache's revision is
moved by the same notifications, so its state at a revision cannot be trusted either.

A list read here is ordered and chunked as the cache orders them (registry keys, in
etcd's order below a resource's prefix), so its continue tokens, which the cache
serves, go on where it stopped.
"""

from __future__ import annotations

from platform_api.storage.etcd.batch import Batched
from platform_api.storage.etcd.cache import WatchCache
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.errors import Compacted, storage_call
from platform_api.storage.etcd.kv import KeyValue, RangeResult, prefix_end
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.values import Values
from platform_api.storage.interface import (
    EXPIRED,
    KEY_NOT_FOUND,
    ListOptions,
    ListResult,
    StorageError,
    Stored,
)

_PAGE = 10000  # keys per Range call of a list (kube's etcd3 store pages as much)
_TXN_OPS = 128  # etcd's default --max-txn-ops: the most gets one call carries


def progress_trusted(version: str) -> bool:
    """Whether an etcd of ``version`` sends progress notifications only after the events
    they cover (kube's RequestWatchProgress check: 3.4.31+ on 3.4, 3.5.13+ after)."""
    try:
        number = tuple(int(part) for part in version.partition("-")[0].split(".")[:3])
    except ValueError:
        return False
    return number >= (3, 5, 13) or (3, 4, 31) <= number < (3, 5, 0)


class ReadThrough:
    """Reads at etcd's current revision, reusing the cache's decoded objects where the
    cache holds the same revision of a key."""

    def __init__(
        self, client: EtcdClient, layout: KeyLayout, values: Values, cache: WatchCache
    ) -> None:
        self.client = client
        self.layout = layout
        self.values = values
        self.cache = cache
        self._gets: Batched[bytes, KeyValue | None] = Batched(self._get_many, most=_TXN_OPS)

    async def get(self, key: bytes) -> Stored:
        kv = await self._gets(key)
        stored = self._stored(kv) if kv is not None else None
        if stored is None:
            raise StorageError(KEY_NOT_FOUND, key)
        return stored

    async def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        """The chunk ``options`` asks for, at one revision (``options.revision``, or the
        current one), read as kube's etcd3 store reads it: from the first key past
        ``start_after``, ``limit`` keys a call (more, doubling, while a predicate leaves
        the chunk short), so a chunk costs its own keys, not the whole prefix's.  A
        ``single`` list reads its one key: no range end, which would double the size of
        a call naming a long key (a 1 MiB name went over etcd's 2 MiB message limit)."""
        if options.single:
            start, end = self.layout.etcd_key(prefix), b""
        else:
            start = self.layout.etcd_key(prefix + b"x")[:-1]  # the prefix's etcd form
            end = prefix_end(start)
        key = start
        if options.start_after.startswith(prefix):
            key = max(start, self.layout.etcd_key(options.start_after) + b"\x00")
        items: list[Stored] = []
        revision, want = options.revision, options.limit
        page = min(want, _PAGE) if want else _PAGE
        while True:
            result = await storage_call(prefix, self._range(prefix, key, end, revision, page))
            revision = revision or result.revision
            taken = self._take(result.kvs, prefix, options, items)
            if want and len(items) == want and (taken < len(result.kvs) or result.more):
                # Full, and a key is left: the next chunk starts after this one's last.
                remaining = None if options.predicate else result.count - taken
                return ListResult(items, revision, items[-1].key, remaining)
            if not result.more or not result.kvs:
                return ListResult(items, revision, None, None)
            key = result.kvs[-1].key + b"\x00"
            if options.predicate:
                page = min(page * 2, _PAGE)

    def _take(
        self, kvs: list[KeyValue], prefix: bytes, options: ListOptions, items: list[Stored]
    ) -> int:
        """Add what ``options`` selects of ``kvs`` to ``items``, up to its limit; how many
        keys that read."""
        for i, kv in enumerate(kvs):
            if options.limit and len(items) == options.limit:
                return i
            stored = self._stored(kv)
            if stored is not None and stored.key.startswith(prefix) and options.selects(stored):
                items.append(stored)
        return len(kvs)

    async def _range(
        self, prefix: bytes, key: bytes, end: bytes, revision: int, limit: int
    ) -> RangeResult:
        try:
            return await self.client.range(key, end, limit=limit, revision=revision)
        except Compacted as e:
            raise StorageError(EXPIRED, prefix, revision=e.compact_revision) from None

    async def _get_many(self, keys: list[bytes]) -> list[KeyValue | None]:
        etcd_keys = [self.layout.etcd_key(key) for key in keys]
        return await storage_call(keys[0], self.client.get_many(etcd_keys))

    def _stored(self, kv: KeyValue) -> Stored | None:
        key = self.layout.registry_key(kv.key)
        cached = self.cache.data.get(key) if key is not None else None
        if cached is not None and cached.revision == kv.mod_revision:
            return cached
        return self.values.stored(kv)
