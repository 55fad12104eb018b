"""The reactor whose timed calls run on the monotonic clock (platform_api/timers.py).

Each test drives one real (never run) reactor with two hand-set clocks, the wall clock
(``seconds``) and the monotonic one, and steps the wall clock as NTP or ``date -s``
would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from twisted.internet import reactor as global_reactor
from twisted.internet.task import Clock
from twisted.logger import LogEvent, globalLogPublisher

from platform_api import timers


class Clocks:
    def __init__(self) -> None:
        self.wall = 1_700_000_000.0
        self.mono = 500.0

    def step(self, seconds: float) -> None:
        """The wall clock alone moves."""
        self.wall += seconds

    def advance(self, seconds: float) -> None:
        """Time passes: both clocks move."""
        self.wall += seconds
        self.mono += seconds


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


@pytest.fixture
def reactor(clocks: Clocks) -> Iterator[Any]:
    made: Any = timers.monotonic_reactor()
    made.seconds = lambda: clocks.wall
    made.monotonic = lambda: clocks.mono
    yield made
    for reader in list(made._internalReaders):
        made.removeReader(reader)
        reader.connectionLost(None)
    made._poller.close()


def test_a_call_waits_for_monotonic_time_whatever_the_wall_clock_does(
    reactor: Any, clocks: Clocks
) -> None:
    fired: list[str] = []
    reactor.callLater(10, fired.append, "a")
    clocks.step(3600)  # the wall clock jumps an hour ahead
    reactor.runUntilCurrent()
    assert fired == []
    clocks.step(-7200)  # and back two
    clocks.advance(9.9)
    reactor.runUntilCurrent()
    assert fired == []
    clocks.advance(0.1)
    reactor.runUntilCurrent()
    assert fired == ["a"]


def test_calls_fire_in_order_of_their_monotonic_time(reactor: Any, clocks: Clocks) -> None:
    fired: list[int] = []
    for delay in (3, 1, 2):
        reactor.callLater(delay, fired.append, delay)
    clocks.advance(5)
    reactor.runUntilCurrent()
    assert fired == [1, 2, 3]


def test_the_reactor_sleeps_for_the_monotonic_time_left(reactor: Any, clocks: Clocks) -> None:
    assert reactor.timeout() is None
    reactor.callLater(30, lambda: None)
    clocks.step(-100)
    assert reactor.timeout() == 30
    clocks.advance(12)
    assert reactor.timeout() == 18
    clocks.advance(40)
    assert reactor.timeout() == 0


def test_get_time_answers_on_the_wall_clock(reactor: Any, clocks: Clocks) -> None:
    call = reactor.callLater(10, lambda: None)
    assert call.getTime() == clocks.wall + 10
    clocks.advance(4)
    assert call.getTime() == clocks.wall + 6
    clocks.step(-60)  # what is left is still six seconds from the wall clock's now
    assert call.getTime() == clocks.wall + 6
    assert reactor.seconds() == clocks.wall  # timestamps stay on the wall clock


def test_reset_and_delay_count_monotonic_time(reactor: Any, clocks: Clocks) -> None:
    fired: list[str] = []
    sooner = reactor.callLater(60, fired.append, "sooner")
    later = reactor.callLater(5, fired.append, "later")
    reactor.runUntilCurrent()  # both pending
    clocks.step(1000)
    sooner.reset(2)
    later.delay(10)
    clocks.advance(2)
    reactor.runUntilCurrent()
    assert fired == ["sooner"]
    clocks.advance(12.9)  # 5 + 10 seconds after it was set
    reactor.runUntilCurrent()
    assert fired == ["sooner"]
    clocks.advance(0.1)
    reactor.runUntilCurrent()
    assert fired == ["sooner", "later"]


def test_a_cancelled_call_never_fires(reactor: Any, clocks: Clocks) -> None:
    fired: list[int] = []
    calls = [reactor.callLater(1, fired.append, i) for i in range(100)]
    reactor.runUntilCurrent()
    for call in calls[:90]:
        call.cancel()
    clocks.advance(1)
    reactor.runUntilCurrent()
    assert sorted(fired) == list(range(90, 100))
    assert reactor.getDelayedCalls() == []


def test_a_failing_call_is_logged_and_the_others_run(reactor: Any, clocks: Clocks) -> None:
    logged: list[LogEvent] = []
    globalLogPublisher.addObserver(logged.append)
    fired: list[str] = []
    try:
        reactor.callLater(1, lambda: 1 / 0)
        reactor.callLater(1, fired.append, "after")
        reactor.callFromThread(lambda: {}["missing"])
        reactor.callFromThread(fired.append, "from thread")
        clocks.advance(1)
        reactor.runUntilCurrent()
    finally:
        globalLogPublisher.removeObserver(logged.append)
    assert fired == ["from thread", "after"]
    failures = [e["log_failure"].type for e in logged if "log_failure" in e]
    assert failures == [KeyError, ZeroDivisionError]
    assert reactor.threadCallQueue == []


def test_a_call_from_thread_queued_by_one_runs_next_turn(reactor: Any) -> None:
    fired: list[str] = []
    reactor.callFromThread(lambda: reactor.callFromThread(fired.append, "second"))
    reactor.runUntilCurrent()
    assert fired == []
    reactor.runUntilCurrent()
    assert fired == ["second"]


def test_timer_clock_is_the_clock_timed_calls_run_on(reactor: Any, clocks: Clocks) -> None:
    assert timers.timer_clock(reactor)() == clocks.mono
    clock = Clock()
    clock.advance(7)
    assert timers.timer_clock(clock)() == 7


def test_install_keeps_a_reactor_already_chosen() -> None:
    timers.install()
    from twisted.internet import reactor

    assert reactor is global_reactor


def test_timer_time_schedules_on_the_reactor_and_reads_its_timer_clock(
    reactor: Any, clocks: Clocks
) -> None:
    time_ = timers.TimerTime(reactor)
    assert time_.seconds() == clocks.mono
    call = time_.callLater(3, lambda: None)
    assert time_.getDelayedCalls() == [call]
