"""A small cluster for RBAC default and aggregation tests: real LMDB storage in a temporary
directory, the registry stores, and a watch hub on a manual clock.

Writes run synchronously (the writer is called inline), so a coroutine that only waits
on storage finishes at once; ``settle`` then delivers committed events and runs what
controllers scheduled.
"""

from __future__ import annotations

import functools
from collections.abc import Coroutine
from typing import Any

from twisted.internet.defer import ensureDeferred, succeed
from twisted.internet.task import Clock

from platform_api.fieldmanager.manager import for_resource
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.interface import ListOptions
from platform_api.storage.lmdb_store import LMDBStorage, RunInWriter, open_environment
from platform_api.storage.watch import WatchHub

RBAC = "rbac.authorization.platform.io"
Obj = dict[str, Any]


class Cluster:
    def __init__(self, path: str, writer: RunInWriter | None = None) -> None:
        self.clock = Clock()
        run_inline: RunInWriter = lambda work: succeed(work())  # noqa: E731
        self.storage = LMDBStorage(open_environment(path, 64 * 2**20), writer or run_inline)
        self.hub = WatchHub(self.storage, self.clock)
        self.storage.on_commit = self.hub.committed
        scheme = builtin_scheme()
        self.stores = {}
        for rt in scheme.all():
            store = self.stores[(rt.group, rt.version, rt.plural)] = Store(rt, self.storage)
            store.field_manager = functools.partial(for_resource, scheme.schemas, rt)

    def rbac(self, plural: str) -> Store:
        return self.stores[(RBAC, "v1", plural)]

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """The result of a coroutine that needs nothing but (synchronous) storage."""
        d = ensureDeferred(coroutine)
        results: list[Any] = []
        d.addBoth(results.append)
        assert results, "the coroutine is still waiting"
        result = results[0]
        if hasattr(result, "raiseException"):
            result.raiseException()
        return result

    def get(self, plural: str, name: str, namespace: str = "") -> Obj:
        obj: Obj = self.rbac(plural).get(namespace, name).object
        return obj

    def names(self, plural: str) -> list[str]:
        items = self.rbac(plural).list("", ListOptions()).items
        return [s.object["metadata"]["name"] for s in items]

    def settle(self, rounds: int = 20) -> None:
        """Deliver committed events and run scheduled work until nothing is left."""
        for _ in range(rounds):
            self.hub.flush()
            if not self.clock.getDelayedCalls():
                return
            self.clock.advance(0.01)
