"""The ``workqueue_*`` series of a controller's queue, counted as client-go's queue
counts them (queuemetrics.py), on a fake clock."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock

from platform_api.apiserver.metrics import REGISTRY, render, reset
from platform_api.controllers.base import Controller
from platform_api.controllers.queuemetrics import ADDS, QUEUE_DURATION, RETRIES, WORK_DURATION


class Queue(Controller):
    """Syncs that wait for the test to finish them, answering what it says."""

    name = "test-queue"
    queue = "test_queue"

    def __init__(self, clock: Clock) -> None:
        super().__init__(None, clock)  # type: ignore[arg-type]  # watches nothing
        self.pending: dict[Hashable, Deferred[Any]] = {}

    def watched(self) -> tuple[bytes, ...]:
        return ()

    async def sync(self, key: Any) -> float | None:
        self.pending[key] = Deferred()
        result: float | None = await self.pending[key]
        return result

    def finish(self, key: Hashable, result: Any = None) -> None:
        d = self.pending.pop(key)
        if isinstance(result, Exception):
            d.errback(result)
        else:
            d.callback(result)


def started(clock: Clock) -> Queue:
    for family in (ADDS, RETRIES, QUEUE_DURATION, WORK_DURATION):
        family.values.pop(("test_queue",), None)
    queue = Queue(clock)
    queue.start()
    return queue


def counts() -> tuple[float, float]:
    return ADDS.values[("test_queue",)], RETRIES.values[("test_queue",)]


def observed(family: Any) -> tuple[float, float]:
    """(observations, their sum) of the queue's histogram."""
    row = family.values.get(("test_queue",))
    return (sum(row[:-1]), row[-1]) if row else (0.0, 0.0)


def gauges() -> dict[str, float]:
    text = render("text/plain")[0].decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("workqueue_") and 'name="test_queue"' in line and "_bucket" not in line:
            name, value = line.rsplit(" ", 1)
            found[name.split("{")[0]] = float(value)
    return found


def test_an_add_waits_then_is_worked_on() -> None:
    clock = Clock()
    queue = started(clock)
    assert counts() == (0.0, 0.0)  # the series exist from the start, as kube's
    queue.enqueue("a")
    queue.enqueue("a")  # already waiting: not another add
    assert counts() == (1.0, 0.0)
    assert gauges()["workqueue_depth"] == 1
    clock.advance(0.25)
    assert observed(QUEUE_DURATION) == (1, 0.25)
    assert gauges()["workqueue_depth"] == 0
    clock.advance(2)
    assert gauges()["workqueue_unfinished_work_seconds"] == 2
    assert gauges()["workqueue_longest_running_processor_seconds"] == 2
    queue.finish("a")
    assert observed(WORK_DURATION) == (1, 2)
    assert gauges()["workqueue_unfinished_work_seconds"] == 0


def test_a_key_queued_while_it_is_worked_on_is_one_more_add_and_runs_after() -> None:
    clock = Clock()
    queue = started(clock)
    queue.enqueue("a")
    clock.advance(0)
    queue.enqueue("a")  # client-go: into the dirty set while processing
    queue.enqueue("a")
    assert counts() == (2.0, 0.0)
    assert gauges()["workqueue_depth"] == 1
    clock.advance(1)
    queue.finish("a")
    clock.advance(0)
    assert "a" in queue.pending  # run again, without another add
    assert counts() == (2.0, 0.0)
    assert observed(QUEUE_DURATION) == (2, 1)  # it waited from its add to its turn


def test_every_delayed_add_is_a_retry_and_an_add_when_it_comes_due() -> None:
    clock = Clock()
    queue = started(clock)
    queue.enqueue("a")
    clock.advance(0)
    queue.finish("a", 5.0)  # the sync asked to be run again in 5 s (AddAfter)
    assert counts() == (1.0, 1.0)
    clock.advance(5)
    assert counts() == (2.0, 1.0)
    queue.finish("a", RuntimeError("failed"))  # retried after a second (AddRateLimited)
    assert counts() == (2.0, 2.0)
    clock.advance(1)
    assert counts() == (3.0, 2.0)
    assert "a" in queue.pending


def test_the_families_are_kubes() -> None:
    started(Clock()).enqueue("a")
    text = render("text/plain")[0].decode()
    for line in (
        "# HELP workqueue_adds_total [BETA] Total number of adds handled by workqueue",
        "# TYPE workqueue_depth gauge",
        "# HELP workqueue_retries_total [BETA] Total number of retries handled by workqueue",
        'workqueue_queue_duration_seconds_bucket{name="test_queue",le="1e-08"} 0',
        'workqueue_queue_duration_seconds_bucket{name="test_queue",le="9.999999999999999e-06"} 0',
        'workqueue_queue_duration_seconds_bucket{name="test_queue",le="10"} 0',
        'workqueue_work_duration_seconds_count{name="test_queue"} 0',
        "# TYPE workqueue_unfinished_work_seconds gauge",
        "# TYPE workqueue_longest_running_processor_seconds gauge",
    ):
        assert line in text, line
    assert REGISTRY is not None


def test_a_controller_kube_runs_elsewhere_has_no_series() -> None:
    class Other(Queue):
        queue = None

    before = dict(ADDS.values)
    other = Other(Clock())
    other.start()
    other.enqueue("a")
    assert ADDS.values == before


def test_a_reset_takes_the_series_until_the_next_add() -> None:
    queue = started(Clock())
    reset()
    assert "workqueue_depth" not in gauges()
    assert ("test_queue",) not in ADDS.values
    queue.enqueue("a")
    assert gauges()["workqueue_depth"] == 1
    assert ADDS.values[("test_queue",)] == 1.0  # afresh, as every family after a reset here
    assert ("test_queue",) not in RETRIES.values
