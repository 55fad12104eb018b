"""client-go's EventCorrelator in the controllers' recorder: similar events combined,
a source's events about one object rate-limited, identical ones counted."""

from __future__ import annotations

from typing import Any

from twisted.internet.task import Clock

from platform_api.controllers.eventcorrelator import COMBINED, Correlator
from platform_api.controllers.events import EventRecorder

Obj = dict[str, Any]
POD = {"metadata": {"name": "web", "namespace": "ns", "uid": "u1", "resourceVersion": "1"}}


class Events:
    """The events store's two writes, kept in memory."""

    def __init__(self) -> None:
        self.items: dict[str, Obj] = {}

    async def create(self, namespace: str, obj: Obj) -> None:
        self.items[obj["metadata"]["name"]] = obj

    async def update(self, namespace: str, name: str, change: Any) -> None:
        self.items[name] = change(self.items[name])


def recorder() -> tuple[EventRecorder, Events, Clock]:
    clock, events = Clock(), Events()
    clock.advance(1_800_000_000)
    return EventRecorder(events, "ctl", clock), events, clock


def test_ten_similar_messages_become_one_combined_event() -> None:
    record, events, clock = recorder()
    for i in range(12):
        record.record(POD, "v1", "Pod", "Warning", "FailedCreate", f"attempt {i}")
        clock.advance(1)
    messages = sorted(e["message"] for e in events.items.values())
    assert len(messages) == 10  # nine as they were, then one combined
    (combined,) = [e for e in events.items.values() if e["message"].startswith(COMBINED)]
    assert combined["message"] == COMBINED + "attempt 11"
    assert combined["count"] == 3  # the 10th, 11th and 12th
    assert combined["lastTimestamp"] > combined["firstTimestamp"]
    assert "reportingComponent" not in combined


def test_similar_events_ten_minutes_apart_start_again() -> None:
    record, events, clock = recorder()
    for i in range(9):
        record.record(POD, "v1", "Pod", "Warning", "FailedCreate", f"attempt {i}")
    clock.advance(601)
    record.record(POD, "v1", "Pod", "Warning", "FailedCreate", "attempt 9")
    assert not [e for e in events.items.values() if e["message"].startswith(COMBINED)]


def test_a_source_may_say_25_things_about_an_object_then_one_per_five_minutes() -> None:
    record, events, clock = recorder()
    for i in range(30):
        record.record(POD, "v1", "Pod", "Normal", f"Reason{i}", "m")
    assert len(events.items) == 25
    clock.advance(299)
    record.record(POD, "v1", "Pod", "Normal", "Late", "m")
    assert len(events.items) == 25
    clock.advance(1)
    record.record(POD, "v1", "Pod", "Normal", "Late", "m")
    assert len(events.items) == 26
    other = {"metadata": {**POD["metadata"], "name": "db", "uid": "u2"}}
    record.record(other, "v1", "Pod", "Normal", "Reason0", "m")  # another object: its own
    assert len(events.items) == 27


def test_a_dropped_repeat_still_counts() -> None:
    record, events, clock = recorder()
    record.record(POD, "v1", "Pod", "Normal", "Pulled", "image pulled")
    for i in range(24):
        record.record(POD, "v1", "Pod", "Normal", f"Other{i}", "m")
    record.record(POD, "v1", "Pod", "Normal", "Pulled", "image pulled")  # over the limit
    (pulled,) = [e for e in events.items.values() if e["reason"] == "Pulled"]
    assert pulled["count"] == 1
    clock.advance(300)
    record.record(POD, "v1", "Pod", "Normal", "Pulled", "image pulled")
    assert pulled["count"] == 3  # the dropped one is in the count, as client-go's is


def test_the_correlator_keys_as_client_go() -> None:
    """Warning and Normal are separate buckets; reason, not message, groups events."""
    clock = Clock()
    correlator = Correlator(clock.seconds)
    event = {
        "metadata": {"name": "x"},
        "involvedObject": {"kind": "Pod", "name": "web"},
        "source": {"component": "ctl"},
        "type": "Normal",
        "reason": "R",
        "message": "m",
    }
    for _ in range(25):
        assert correlator.allowed(event)
    assert not correlator.allowed(event)
    assert correlator.allowed({**event, "type": "Warning"})
    first, key = correlator.aggregate(event)
    assert first is event and key[-1] == "m"
