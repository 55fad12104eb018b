"""A large request's store steps that walk the whole object (its ownership, a patch's
application, the kind's preparation and validation) run off the reactor's thread; a small
one's inline (``platform_api.heavy``)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from platform_api import heavy
from platform_api.registry import store as store_module
from platform_api.registry import storeupdate
from tests.admission.plugin_kit import Cluster

Obj = dict[str, Any]


SEEN: list[tuple[str, int]] = []


@pytest.fixture(autouse=True)
def recorded_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kind's preparation and validation, recording the thread they ran on."""
    SEEN.clear()
    steps = [
        (store_module, "before_create"),
        (storeupdate, "prepare_update"),
        (storeupdate, "check_update"),
    ]
    for module, name in steps:
        real = getattr(module, name)

        def recorded(*args: Any, _real: Any = real, _name: str = name) -> Any:
            SEEN.append((_name, threading.get_ident()))
            return _real(*args)

        monkeypatch.setattr(module, name, recorded)


async def _writes(cluster: Cluster, size: int) -> list[tuple[str, int]]:
    """A create and an update of one ConfigMap, in a request whose body is ``size`` bytes."""
    store = cluster.store("configmaps")
    seen = SEEN

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
    assert [step for step, _ in seen] == [
        "track",
        "before_create",
        "updated",
        "track",
        "prepare_update",
        "check_update",
    ]
    threads = {thread for _, thread in seen}
    assert len(threads) == 1 and threading.get_ident() not in threads


@pytest_twisted.ensureDeferred
async def test_a_small_requests_run_inline(tmp_path: Path) -> None:
    seen = await Deferred.fromCoroutine(_writes(Cluster(str(tmp_path)), 100))
    assert {thread for _, thread in seen} == {threading.get_ident()}
