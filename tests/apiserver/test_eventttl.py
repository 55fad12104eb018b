"""--event-ttl: Events go their TTL after their last write, as kube's etcd leases make
them go; an Event written again lives on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import succeed
from twisted.internet.task import Clock

from platform_api.apiserver.eventttl import EventTTL, last_written
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.interface import ListOptions
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub
from tests.admission.plugin_kit import run

TTL = 3600.0


class Events:
    """The Event store on a real LMDB, a hub and a clock, as the server wires them."""

    def __init__(self, path: str) -> None:
        self.clock = Clock()
        self.clock.advance(1_800_000_000)
        storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.hub = WatchHub(storage, self.clock)
        storage.on_commit = self.hub.committed
        rt = builtin_scheme().lookup("", "v1", "events")
        assert rt is not None
        self.store = Store(rt, storage, clock=self.clock.seconds)

    def write(self, name: str, **fields: Any) -> None:
        obj = {"metadata": {"name": name}, "involvedObject": {"kind": "Pod", "name": "p"}}
        obj |= {"reason": "R", "message": "m", "type": "Normal", **fields}
        run(self.store.create("default", obj))
        self.clock.advance(0)  # the hub delivers

    def names(self) -> list[str]:
        self.clock.advance(0)
        found = self.store.list("default", ListOptions()).items
        return sorted(s.object["metadata"]["name"] for s in found)

    def controller(self, ttl: float = TTL) -> EventTTL:
        made = EventTTL(self.store, ttl, self.hub, self.clock)
        made.start()
        return made


@pytest.fixture
def events(tmp_path: Path) -> Events:
    return Events(str(tmp_path / "db"))


def test_an_event_goes_its_ttl_after_it_was_written(events: Events) -> None:
    events.controller()
    events.write("e1")
    events.clock.advance(TTL - 1)
    assert events.names() == ["e1"]
    events.clock.advance(1)
    assert events.names() == []


def test_a_write_again_starts_the_ttl_again(events: Events) -> None:
    events.controller()
    events.write("e1")
    events.clock.advance(TTL - 10)

    def again(current: Any) -> Any:
        return {**current, "count": 2}

    run(events.store.update("default", "e1", again))
    events.clock.advance(0)
    events.clock.advance(20)
    assert events.names() == ["e1"]
    events.clock.advance(TTL)
    assert events.names() == []


def test_events_stored_before_the_start_count_from_their_newest_time(events: Events) -> None:
    events.write("old")  # at t
    events.clock.advance(TTL - 100)
    events.write("recent")  # at t + TTL - 100
    events.clock.advance(105)  # no server led meanwhile
    events.controller()
    assert events.names() == ["recent"]  # "old" was due at t + TTL
    events.clock.advance(TTL - 106)
    assert events.names() == ["recent"]
    events.clock.advance(1)
    assert events.names() == []


def test_a_ttl_of_zero_keeps_events_and_deleted_ones_are_forgotten(events: Events) -> None:
    keeper = events.controller(0)
    events.write("kept")
    events.clock.advance(10 * TTL)
    assert events.names() == ["kept"]
    keeper.stop()
    events.controller()
    run(events.store.delete("default", "kept"))
    events.clock.advance(0)
    events.clock.advance(TTL)  # its timer was cancelled: nothing to delete, no error
    assert events.names() == []


def test_the_newest_time_an_event_names_stands_for_its_write() -> None:
    event = {
        "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-02T00:00:00Z",
        "series": {"lastObservedTime": "2026-01-03T00:00:00.000000Z"},
    }
    assert last_written(event) == last_written({"eventTime": "2026-01-03T00:00:00.000000Z"})
    assert last_written({"metadata": {}}) is None


def test_a_timer_that_fires_after_a_new_write_deletes_nothing(events: Events) -> None:
    """Between a timer firing and its sync, the Event may be written again."""
    controller = events.controller()
    events.write("e1")
    events.clock.advance(TTL - 1)
    run(events.store.update("default", "e1", lambda current: {**current, "count": 3}))
    events.clock.advance(0)
    assert run(controller.sync(("default", "e1"))) is None
    assert events.names() == ["e1"]
