"""A large request's store steps that walk the whole object (its ownership, a patch's
application) run off the reactor's thread; a small one's inline (``platform_api.heavy``)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from platform_api import heavy
from tests.admission.plugin_kit import Cluster

Obj = dict[str, Any]


async def _writes(cluster: Cluster, size: int) -> list[tuple[str, int]]:
    """A create and an update of one ConfigMap, in a request whose body is ``size`` bytes."""
    store = cluster.store("configmaps")
    seen: list[tuple[str, int]] = []

    def track(live: Obj | None, new: Obj) -> None:
        seen.append(("track", threading.get_ident()))

    def updated(existing: Obj | None) -> Obj:
        seen.append(("updated", threading.get_ident()))
        assert existing is not None
        return {**existing, "data": {"a": "c"}}

    heavy.mark(reactor, size)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}}
    await store.create("default", cm, track=track)
    stored, _ = await store.update("default", "cm", updated, track=track)
    assert stored.object["data"] == {"a": "c"}
    return seen


@pytest_twisted.ensureDeferred
async def test_a_large_requests_tracking_and_update_run_on_a_thread(tmp_path: Path) -> None:
    seen = await Deferred.fromCoroutine(_writes(Cluster(str(tmp_path)), heavy.THRESHOLD))
    assert [step for step, _ in seen] == ["track", "updated", "track"]
    threads = {thread for _, thread in seen}
    assert len(threads) == 1 and threading.get_ident() not in threads


@pytest_twisted.ensureDeferred
async def test_a_small_requests_run_inline(tmp_path: Path) -> None:
    seen = await Deferred.fromCoroutine(_writes(Cluster(str(tmp_path)), 100))
    assert {thread for _, thread in seen} == {threading.get_ident()}
