"""A real store of FlowSchemas and PriorityLevelConfigurations on LMDB, run on a Clock."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, maybeDeferred
from twisted.internet.task import Clock

from platform_api import registry  # noqa: F401  (registers the strategies)
from platform_api.apiserver.flowcontrol.config import FlowControlConfig
from platform_api.apiserver.flowcontrol.estimate import ObjectStats, WatchCounts, WorkEstimator
from platform_api.controllers.informer import Informer
from platform_api.fieldmanager.manager import for_resource
from platform_api.registry.flowcontrol_bootstrap import GROUP
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub


@dataclass
class World:
    clock: Clock
    schemas: Store
    levels: Store
    config: FlowControlConfig
    hub: WatchHub
    estimator: WorkEstimator

    def run(self, coro: Any) -> Any:
        d = ensureDeferred(coro)
        self.clock.advance(0.1)  # the hub delivers, the config rebuilds
        self.clock.advance(0.1)
        return d.result if hasattr(d, "result") else None

    def create(self, store: Store, obj: dict[str, Any]) -> None:
        self.run(store.create("", obj))


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = Clock()
    clock.advance(1_000_000)
    storage = LMDBStorage(open_environment(str(tmp_path / "db"), 2**26), maybeDeferred)
    hub = WatchHub(storage, clock)
    storage.on_commit = hub.committed
    scheme = builtin_scheme()
    stores = []
    for plural in ("flowschemas", "prioritylevelconfigurations"):
        rt = scheme.lookup(GROUP, "v1", plural)
        assert rt is not None
        stores.append(Store(rt, storage))
        stores[-1].field_manager = functools.partial(for_resource, scheme.schemas, rt)
    informer = Informer(storage, hub, (stores[0].prefix, stores[1].prefix))
    config = FlowControlConfig(stores[0], stores[1], informer, clock, server_limit=600)
    config.start(ensure=False)
    estimator = WorkEstimator(ObjectStats(storage, lambda: stores), WatchCounts())
    w = World(clock, stores[0], stores[1], config, hub, estimator)
    w.run(config.ensure())
    yield w
    config.stop()
