"""Calls' deadlines on one timer: each call that is not over by its deadline expires then,
exactly then, and one that finished costs nothing more."""

from __future__ import annotations

from twisted.internet.task import Clock

from platform_api.storage.etcd.deadlines import Deadlines


class Call:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.finished = False
        self.expired_at: float | None = None

    def over(self) -> bool:
        return self.finished or self.expired_at is not None

    def expire(self) -> None:
        assert self.expired_at is None, "expired twice"
        self.expired_at = self.clock.seconds()


def one_call(timeout: float) -> tuple[Clock, Deadlines, Call]:
    """A clock, deadlines of ``timeout`` and a call added at time 0."""
    clock = Clock()
    deadlines = Deadlines(clock, timeout)
    call = Call(clock)
    deadlines.add(call, 0.0)
    return clock, deadlines, call


def test_a_call_not_over_expires_at_its_own_deadline() -> None:
    clock = Clock()
    deadlines = Deadlines(clock, 10.0)
    calls = []
    for start in (0.0, 1.0, 2.5):
        clock.advance(start - clock.seconds())
        call = Call(clock)
        deadlines.add(call, clock.seconds())
        calls.append(call)
    calls[1].finished = True
    clock.pump([0.5] * 40)
    assert [c.expired_at for c in calls] == [10.0, None, 12.5]
    assert len(deadlines) == 0
    assert clock.getDelayedCalls() == []


def test_one_timer_whatever_the_number_of_calls() -> None:
    clock = Clock()
    deadlines = Deadlines(clock, 10.0)
    for _ in range(1000):
        deadlines.add(Call(clock), clock.seconds())
        clock.advance(0.001)
    assert len(clock.getDelayedCalls()) == 1


def test_finished_calls_leave_the_queue_as_new_ones_come() -> None:
    """A steady stream of calls that finish at once keeps the queue short: each new call
    drops the finished ones ahead of it, so it does not grow until the next deadline."""
    clock = Clock()
    deadlines = Deadlines(clock, 10.0)
    for _ in range(5000):
        call = Call(clock)
        deadlines.add(call, clock.seconds())
        call.finished = True
        clock.advance(0.001)
    assert len(deadlines) == 1


def test_a_finished_head_moves_the_timer_to_the_next_live_call() -> None:
    clock, deadlines, first = one_call(10.0)
    second = Call(clock)
    clock.advance(4.0)
    deadlines.add(second, 4.0)
    first.finished = True
    clock.advance(6.0)  # the first's deadline: nothing expires, the timer moves on
    assert second.expired_at is None
    assert [c.getTime() for c in clock.getDelayedCalls()] == [14.0]
    clock.advance(4.0)
    assert second.expired_at == 14.0


def test_a_call_added_after_the_queue_emptied_gets_a_timer_again() -> None:
    clock, deadlines, first = one_call(1.0)
    clock.advance(1.0)
    assert first.expired_at == 1.0 and clock.getDelayedCalls() == []
    clock.advance(5.0)
    later = Call(clock)
    deadlines.add(later, clock.seconds())
    clock.advance(1.0)
    assert later.expired_at == 7.0


def test_stop_forgets_every_deadline() -> None:
    clock, deadlines, call = one_call(1.0)
    deadlines.stop()
    clock.advance(2.0)
    assert call.expired_at is None and clock.getDelayedCalls() == []
