"""kube's priority and fairness filter: in place of max-in-flight when APF is on.

``admit`` classifies the request (FlowSchema -> priority level), names both by UID in
the ``X-Platform-PF-*`` response headers, estimates its work (estimate.py) and returns
an async context manager that holds the estimated seats of the level while the request
runs; a watch holds them only until it has sent its initial state (entering the
context gives the function that tells so; kube's initialization signal) and is then
counted among the watches a write's estimate weighs.  A request of an exempt level runs
at once; the other long-running ones (exec, proxy, logs...) pass unclassified, as in
kube.  A limited level queues the request fairly; one it will not run gets kube's
plain-text 429 with a ``Retry-After`` that grows while the level keeps dropping
requests.  A request waits at most a quarter of ``--request-timeout`` (at most a
minute), as kube's wait context.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from types import TracebackType
from typing import Any, NoReturn

from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.web.server import Request

from platform_api.apiserver.flowcontrol.config import FlowControlConfig, Level
from platform_api.apiserver.flowcontrol.estimate import ONE_SEAT, WorkEstimate, WorkEstimator
from platform_api.apiserver.flowcontrol.metrics import (
    DISPATCHED,
    EXECUTION,
    GAUGES,
    REJECTED,
    WAIT,
)
from platform_api.apiserver.flowcontrol.queueset import CANCELLED, QueueSet, Rejected, Ticket
from platform_api.apiserver.inflight import KINDS, READ_VS_WRITE, InflightLimiter, refuse
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import UserInfo

SCHEMA_HEADER = b"X-Platform-PF-FlowSchema-UID"
LEVEL_HEADER = b"X-Platform-PF-PriorityLevel-UID"
# Under --serve-upstream-groups, kube's own names (upstream's e2e cases read them).
UPSTREAM_HEADERS = (b"X-Kubernetes-PF-FlowSchema-UID", b"X-Kubernetes-PF-PriorityLevel-UID")
MAX_RETRY_AFTER = 32
_READONLY = ("get", "list", "watch")
Labels = tuple[str, str]  # (flow_schema, priority_level)


class DroppedRequests:
    """kube's dropped-requests tracker: Retry-After per level, 1 s up to 32 s, doubled
    while drops keep coming (>= 3 per Retry-After second), lowered as they stop."""

    def __init__(self, clock: IReactorTime) -> None:
        self.clock = clock
        # level -> [retry_after, updated_at, current second, count, history [(second, n)]]
        self._stats: dict[str, list[Any]] = {}

    def retry_after(self, level: str) -> int:
        stats = self._stats.get(level)
        return stats[0] if stats else 1

    def record(self, level: str) -> None:
        now = int(self.clock.seconds())
        stats = self._stats.setdefault(level, [1, 0, 0, 0, []])
        if stats[2] == now:
            stats[3] += 1
            return
        history: list[tuple[int, int]] = stats[4]
        history.append((stats[2], stats[3]))
        keep = min(2 * stats[0], MAX_RETRY_AFTER)
        stats[4] = history = [h for h in history if stats[2] - h[0] <= keep]
        stats[2], stats[3] = now, 1
        retry = stats[0]
        dropped = sum(n for second, n in history if now - second <= retry and second < now)
        if now - stats[1] >= retry and dropped >= 3 * retry:
            stats[0], stats[1] = min(retry * 2, MAX_RETRY_AFTER), now
        elif dropped < retry and retry > 1:
            stats[0] = retry - 1


class PriorityAndFairness(InflightLimiter):
    """The APF filter, shaped as the in-flight limiter it replaces."""

    def __init__(
        self,
        config: FlowControlConfig,
        clock: IReactorTime,
        request_timeout: float,
        estimator: WorkEstimator,
        headers: tuple[bytes, bytes] | None = None,
    ):
        super().__init__(0, 0, clock.seconds)
        self.schema_header, self.level_header = headers or (SCHEMA_HEADER, LEVEL_HEADER)
        self.config = config
        self.clock = clock
        # requests queued over the queues' room, by kind
        self.waiting_share = {
            mutating: READ_VS_WRITE.child("waiting", kind, clock=clock.seconds)
            for mutating, kind in KINDS.items()
        }
        self.waiting = {False: 0, True: 0}
        config.on_rebuild.append(self._capacity)
        self._capacity()
        self.wait_limit = min(request_timeout / 4, 60.0)
        self.dropped = DroppedRequests(clock)
        self.estimator = estimator

    def admit(
        self, request: Request, info: RequestInfo, user: UserInfo
    ) -> AbstractAsyncContextManager[Callable[[], None] | None]:
        if info.long_running and info.verb != "watch":
            return nullcontext()  # kube's filter lets them through unclassified
        config = self.config
        match = config.classifier.classify(info, user)
        level = config.levels.get(match.schema.level) if match is not None else None
        if match is None or level is None:
            return _Seat(self, request, info, None, None, None, ONE_SEAT)
        request.setHeader(self.level_header, level.uid_header)
        request.setHeader(self.schema_header, match.uid)
        work = self.estimator.estimate(info, request.args, level.max_seats, match.labels)
        if level.queues is None:
            return _Seat(self, request, info, level, match.labels, None, work)
        try:
            ticket = level.queues.enter(match.flow, work, match.labels)
        except Rejected as e:
            self._reject(info, level, match.labels, e.reason)
        return _Seat(self, request, info, level, match.labels, ticket, work)

    def _capacity(self) -> None:
        """The read-vs-write series' denominators: the levels' seats, and the requests
        their queues hold (kube's maxExecutingRequests and maxWaitingRequests)."""
        executing, waiting = self.config.capacity()
        for mutating in KINDS:  # none yet (no levels read): the last ones stand, not NaN
            if executing:
                self.executing_share[mutating].set_denominator(executing)
            if waiting:
                self.waiting_share[mutating].set_denominator(waiting)

    def queued(self, mutating: bool, delta: int) -> None:
        count = self.waiting[mutating] = self.waiting[mutating] + delta
        self.waiting_share[mutating].set(count)

    def _reject(self, info: RequestInfo, level: Level, labels: Labels, reason: str) -> NoReturn:
        """Count the refusal and answer kube's plain-text 429 (``inflight.refuse``)."""
        REJECTED.inc(*labels, reason)
        self.dropped.record(level.name)
        if self.on_reject is not None:
            self.on_reject(info)
        refuse(self.dropped.retry_after(level.name))


class _Seat:
    """From ``async with`` entry to exit, or for a watch until it has started: the
    request's seats of its level (for an exempt request, only the counts)."""

    __slots__ = (
        "filter",
        "forget",
        "held",
        "info",
        "labels",
        "level",
        "mutating",
        "request",
        "started_at",
        "ticket",
        "work",
    )

    def __init__(
        self,
        apf: PriorityAndFairness,
        request: Request,
        info: RequestInfo,
        level: Level | None,
        labels: Labels | None,
        ticket: Ticket | None,
        work: WorkEstimate,
    ) -> None:
        self.filter, self.request, self.info = apf, request, info
        self.level, self.labels, self.ticket, self.work = level, labels, ticket, work
        self.mutating = info.verb not in _READONLY
        self.held = False
        self.started_at = 0.0
        self.forget: Callable[[], None] | None = None

    async def __aenter__(self) -> Callable[[], None] | None:
        ticket, level, labels = self.ticket, self.level, self.labels
        if ticket is not None and level is not None and level.queues is not None and labels:
            if ticket.waiter is not None:
                await self._wait(ticket, level, level.queues, labels)
            else:
                WAIT.observe(0.0, "true", *labels)
        self.held = True
        self.started_at = self.filter.clock.seconds()
        if labels is not None:
            DISPATCHED.inc(*labels)
            _add(GAUGES.executing, labels, 1)
            _add(GAUGES.seats, labels, self.work.seats)
        if level is not None and level.use is not None:
            level.use.add(self.work.seats, 1)
        self.filter.running(self.mutating, 1)
        if self.info.verb != "watch":
            return None
        self.forget = self.filter.estimator.watches.register(self.info)
        return self.started

    def started(self) -> None:
        """The request's seats and counts go back (a watch that has sent its initial
        state; any request, once answered)."""
        if not self.held:
            return
        self.held = False
        self.filter.running(self.mutating, -1)
        labels, work, level = self.labels, self.work, self.level
        if labels is not None:
            GAUGES.executing[labels] -= 1
            self._after_final_seats(_add, GAUGES.seats, labels, -work.seats)
            kind = "watch" if self.info.verb == "watch" else "regular"
            EXECUTION.observe(self.filter.clock.seconds() - self.started_at, *labels, kind)
        if level is not None and level.use is not None:
            level.use.add(0, -1)
            self._after_final_seats(level.use.add, -work.seats)
        if self.ticket is not None and level is not None and level.queues is not None:
            level.queues.finish(self.ticket)

    def _after_final_seats(self, release: Callable[..., None], *args: Any) -> None:
        """``release(*args)`` once the request's final seats are given back: at once, or
        after a write's additional latency."""
        work = self.work
        if work.final and work.latency > 0:
            self.filter.clock.callLater(work.latency, release, *args)
        else:
            release(*args)

    async def _wait(self, ticket: Ticket, level: Level, queues: QueueSet, labels: Labels) -> None:
        waiter = ticket.waiter
        assert waiter is not None
        inqueue = GAUGES.inqueue
        inqueue[labels] = inqueue.get(labels, 0) + 1
        self.filter.queued(self.mutating, 1)
        _add(GAUGES.inqueue_seats, labels, self.work.seats)
        queues.expire(ticket, self.filter.wait_limit)
        gone: Deferred[Any] = self.request.notifyFinish()
        gone.addBoth(lambda _: None if waiter.called else waiter.cancel())
        reason = ""
        try:
            await waiter
        except Rejected as e:
            reason = e.reason
        except CancelledError:
            reason = CANCELLED
        inqueue[labels] -= 1
        self.filter.queued(self.mutating, -1)
        _add(GAUGES.inqueue_seats, labels, -self.work.seats)
        waited = self.filter.clock.seconds() - ticket.arrived
        WAIT.observe(waited, "false" if reason else "true", *labels)
        if reason:
            self.filter._reject(self.info, level, labels, reason)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.started()
        if self.forget is not None:
            self.forget()


def _add(table: dict[Labels, int], labels: Labels, delta: int) -> None:
    table[labels] = table.get(labels, 0) + delta
