"""A reactor whose timed calls run on the monotonic clock, as Go's timers do.

Twisted's reactor schedules ``callLater`` on ``time.time``.  A step of the machine's
clock (NTP correcting it, a virtual machine resumed, ``date -s``) then fires every timer
due within the step at once, or holds every timer back by it: a watch's
``timeoutSeconds``, request deadlines, HTTP/2 idle time, retries, lease renewals.
kube-apiserver's timers do not move with the wall clock.

This reactor keeps ``seconds()`` the wall clock, which timestamps need, and runs its
timed calls on ``time.monotonic``.  A call's ``getTime()`` still answers on the wall
clock (now plus what is left), so code that compares it with ``seconds()`` holds.  Code
that measures a duration, or a deadline of its own, takes ``timer_clock(reactor)``: the
monotonic clock here, a test's ``task.Clock`` there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

from twisted.internet.base import DelayedCall, ReactorBase
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

log = Logger()
_THREAD_CALL = log.failureHandler("while calling from thread")
_TIMED_CALL = log.failureHandler("while handling timed call")
# epoll_wait takes its timeout as a C int of milliseconds (Twisted's own bound).
_LONGEST_SLEEP = 2147483


def timer_clock(reactor: Any) -> Callable[[], float]:
    """The clock ``reactor``'s timed calls run on: for durations and deadlines, where
    ``seconds()`` (the wall clock) is for timestamps."""
    clock: Callable[[], float] = getattr(reactor, "monotonic", reactor.seconds)
    return clock


@implementer(IReactorTime)
class TimerTime:
    """``reactor``'s ``IReactorTime`` with ``seconds`` its timer clock, for a component
    that only schedules and measures (flow control's queues and seats)."""

    def __init__(self, reactor: Any) -> None:
        self.seconds = timer_clock(reactor)
        self.callLater = reactor.callLater
        self.getDelayedCalls = reactor.getDelayedCalls


class MonotonicCall(DelayedCall):
    """A timed call due at a monotonic time, reporting it on the wall clock."""

    wall: Callable[[], float] = staticmethod(time.time)

    def getTime(self) -> float:
        return self.wall() + (self.time + self.delayed_time - self.seconds())


class MonotonicTimers(ReactorBase):
    """``ReactorBase``'s timed calls, judged by ``monotonic`` instead of ``seconds``.
    Mixed in before a concrete reactor class; only the three methods that read the
    time differ from Twisted's."""

    monotonic: Callable[[], float] = staticmethod(time.monotonic)

    def callLater(
        self, delay: float, callable: Callable[..., Any], *args: object, **kw: object
    ) -> DelayedCall:
        assert delay >= 0, f"{delay} is not greater than or equal to 0 seconds"
        call = MonotonicCall(
            self.monotonic() + delay,
            callable,
            args,
            kw,
            self._cancelCallLater,
            self._moveCallLaterSooner,
            seconds=self.monotonic,
        )
        call.wall = self.seconds
        self._newTimedCalls.append(call)
        return call

    def timeout(self) -> float | None:
        self._insertNewDelayedCalls()
        if not self._pendingTimedCalls:
            return None
        delay = self._pendingTimedCalls[0].time - self.monotonic()
        return max(0, min(_LONGEST_SLEEP, delay))

    def runUntilCurrent(self) -> None:
        self._run_thread_calls()
        self._insertNewDelayedCalls()
        now, heap = self.monotonic(), self._pendingTimedCalls
        while heap and heap[0].time <= now:
            call = heappop(heap)
            if call.cancelled:
                self._cancellations -= 1
                continue
            if call.delayed_time > 0.0:  # delay()ed or reset() later meanwhile
                call.activate_delay()
                heappush(heap, call)
                continue
            with _TIMED_CALL:
                call.called = 1
                call.func(*call.args, **call.kw)
        if self._cancellations > 50 and self._cancellations > len(heap) >> 1:
            self._cancellations = 0
            self._pendingTimedCalls = [call for call in heap if not call.cancelled]
            heapify(self._pendingTimedCalls)
        if self._justStopped:
            self._justStopped = False
            self.fireSystemEvent("shutdown")

    def _run_thread_calls(self) -> None:
        """The calls threads queued (``callFromThread``) before this turn began."""
        queue = self.threadCallQueue
        if not queue:
            return
        total = len(queue)
        for count, (f, args, kw) in enumerate(queue, 1):
            with _THREAD_CALL:
                f(*args, **kw)
            if count == total:
                break
        del queue[:total]
        if queue:
            self.wakeUp()


def _reactor_class() -> type[ReactorBase]:
    try:
        from twisted.internet.epollreactor import EPollReactor  # noqa: PLC0415

        return EPollReactor
    except ImportError:  # not Linux
        from twisted.internet.pollreactor import PollReactor  # noqa: PLC0415

        return PollReactor


def monotonic_reactor() -> ReactorBase:
    """A new reactor of this platform's usual kind with monotonic timers."""
    base = _reactor_class()
    kind = type(f"Monotonic{base.__name__}", (MonotonicTimers, base), {})
    reactor: ReactorBase = kind()
    return reactor


def install() -> None:
    """Make the monotonic reactor the global one, unless one is already chosen (twistd's
    ``--reactor``, or an earlier import of ``twisted.internet.reactor``)."""
    if "twisted.internet.reactor" in sys.modules:
        return
    from twisted.internet.main import installReactor  # noqa: PLC0415

    installReactor(monotonic_reactor())
