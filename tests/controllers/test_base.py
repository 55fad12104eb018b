"""The controllers' work queue: a key queued sooner than its scheduled re-check runs sooner;
each sync's writes recorded as the controller's."""

from __future__ import annotations

from typing import Any

from twisted.internet.task import Clock
from twisted.logger import LogLevel, globalLogPublisher

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.fieldmanager.manager import FieldManager
from platform_api.fieldmanager.typed import Typed
from platform_api.registry.store import WRITER
from platform_api.storage.interface import ADDED, Event, Stored
from platform_api.storage.watch import WatchHub
from tests.admission.plugin_kit import SCHEME, Cluster


class Periodic(Controller):
    """Asks to run every key again in 30 s, as the availability controller does."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(hub=None, reactor=clock)  # type: ignore[arg-type]
        self.runs: list[tuple[str, float]] = []
        self.running = True

    async def sync(self, key: Any) -> float | None:
        self.runs.append((key, self.reactor.seconds()))
        return 30.0


def test_an_earlier_enqueue_replaces_a_later_recheck() -> None:
    clock = Clock()
    controller = Periodic(clock)
    controller.enqueue("a")
    clock.advance(0)
    assert controller.runs == [("a", 0)]
    clock.advance(5)
    controller.enqueue("a")  # a change: not 25 s from now, but now
    clock.advance(0)
    assert controller.runs == [("a", 0), ("a", 5)]
    controller.enqueue("a", 60)  # later than the scheduled re-check: that one stays
    clock.advance(30)
    assert controller.runs == [("a", 0), ("a", 5), ("a", 35)]
    assert len(clock.getDelayedCalls()) == 1


class Racing(Controller):
    """Its object disappears under the first sync (kube's controllers see that race)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(hub=None, reactor=clock)  # type: ignore[arg-type]
        self.runs = 0
        self.running = True

    async def sync(self, key: Any) -> float | None:
        self.runs += 1
        if self.runs == 1:
            raise errors.not_found("deployments", "apps", key)
        return None


def test_an_object_gone_under_a_sync_is_retried_without_a_traceback() -> None:
    clock = Clock()
    controller = Racing(clock)
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    try:
        controller.enqueue("web")
        clock.advance(0)
    finally:
        globalLogPublisher.removeObserver(seen.append)
    assert [e["log_level"] for e in seen] == [LogLevel.info]
    assert "log_failure" not in seen[0]
    clock.advance(1.0)
    assert controller.runs == 2


class Writer(Controller):
    """Writes a ConfigMap per key through a store with a field manager."""

    def __init__(self, clock: Clock, store: Any, manager: str | None) -> None:
        super().__init__(hub=None, reactor=clock)  # type: ignore[arg-type]
        self.store = store
        self.manager = manager
        self.running = True

    async def sync(self, key: Any) -> float | None:
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": key}}
        await self.store.create("default", {**obj, "data": {"k": "v"}})
        return None


def test_a_controllers_writes_are_recorded_as_its_own(tmp_path: Any) -> None:
    store = Cluster(str(tmp_path / "db")).store("configmaps")
    node = SCHEME.schemas.get(store.resource.definition)
    manager = FieldManager(Typed(SCHEME.schemas), node, True)
    store.field_manager = lambda: manager
    clock = Clock()
    for name, writer in (("a", "kube-controller-manager"), ("b", "kube-apiserver"), ("c", None)):
        Writer(clock, store, writer).enqueue(name)
    clock.advance(0)
    managers = {
        name: [
            e["manager"]
            for e in store.get("default", name).object["metadata"].get("managedFields", [])
        ]
        for name in "abc"
    }
    assert managers == {"a": ["kube-controller-manager"], "b": ["kube-apiserver"], "c": []}
    assert WRITER.get() is None  # set in each sync's own task, not here


class Watching(Controller):
    """Observes what it declares; ``watch=()`` polls instead."""

    def __init__(self, hub: Any, clock: Clock, watch: tuple[bytes, ...]) -> None:
        super().__init__(hub, clock)
        self.watch, self.seen = watch, list[bytes]()

    def watched(self) -> tuple[bytes, ...]:
        return self.watch

    def observe(self, event: Any) -> None:
        self.seen.append(event.key)


def test_a_controller_hears_only_the_resources_it_watches() -> None:
    class Log:
        def current_revision(self) -> int:
            return 0

    clock = Clock()
    hub = WatchHub(Log(), clock)  # type: ignore[arg-type]
    pods = Watching(hub, clock, (b"/core/pods/",))
    poller = Watching(hub, clock, ())
    pods.start(), poller.start()
    assert hub.subscriber_count() == 1  # the poller is not subscribed
    keys = [b"/core/configmaps/a/x", b"/core/pods/a/p"]
    hub.committed([Event(ADDED, i + 1, k, Stored(k, i + 1, b"{}")) for i, k in enumerate(keys)])
    clock.advance(0)
    assert pods.seen == [b"/core/pods/a/p"] and poller.seen == []
    pods.stop(), poller.stop()
    assert hub.subscriber_count() == 0
