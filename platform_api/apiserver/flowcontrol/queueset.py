"""Fair queuing for one priority level: kube's queueset, on the reactor thread.

Each flow (flow schema + distinguisher) is dealt a hand of ``handSize`` queues out of
``queues`` (shuffle sharding) and joins the queue of its hand with the least work
waiting.  A request is as wide as its work estimate (estimate.py): the level runs
requests while their seats fit in ``limit`` (one wider than the limit runs alone), and
a write keeps its final seats for its additional latency after it ends.  Free seats go
to the head of the queue whose head would finish first in virtual time: each queue
advances by a request's estimated work (seats x service time, plus the final seats'
time) when it is dispatched, corrected by the actual time when it ends, and the
virtual clock runs at ``min(seats wanted, limit) / active queues`` per real second, so
a busy flow cannot push ahead of quieter ones.  A queue that went idle restarts at the
current virtual time (no credit is saved up).  Waiting is a Deferred: it fires with the
request's seats, or fails with ``Rejected`` on timeout; cancelling it takes the request
out of its queue.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from platform_api.apiserver.flowcontrol.borrowing import Integrator
from platform_api.apiserver.flowcontrol.estimate import ONE_SEAT, WorkEstimate
from platform_api.apiserver.flowcontrol.metrics import NO_ACCOMMODATION, QUEUE_LENGTH, LevelTimings

# kube's estimated service time of a request before it is known (queueset.go).
ESTIMATED_SERVICE = 0.003
QUEUE_FULL, CONCURRENCY_LIMIT, TIME_OUT, CANCELLED = (
    "queue-full",
    "concurrency-limit",
    "time-out",
    "cancelled",
)


class Rejected(Exception):
    """A request the level will not run; ``reason`` is the metrics' label value."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def flow_hash(schema: str, distinguisher: str) -> int:
    """A stable 64-bit hash of a flow's identity (same deal in every process)."""
    digest = hashlib.blake2b(f"{schema}\x00{distinguisher}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def deal(hash_value: int, deck: int, hand: int) -> list[int]:
    """``hand`` distinct cards of ``deck`` chosen by ``hash_value`` (kube's Dealer)."""
    remainders: list[int] = []
    for i in range(hand):
        hash_value, remainder = divmod(hash_value, deck - i)
        remainders.append(remainder)
    cards: list[int] = []
    for i, remainder in enumerate(remainders):
        card = remainder
        for j in range(i, 0, -1):
            if card >= remainders[j - 1]:
                card += 1
        cards.append(card)
    return cards


class _Queue:
    __slots__ = ("executing", "index", "next_r", "seats", "waiting", "waiting_work")

    def __init__(self, index: int) -> None:
        self.index = index
        self.waiting: deque[Ticket] = deque()
        self.waiting_work = 0.0  # seat-seconds of the requests waiting
        self.executing = 0
        self.seats = 0  # held by its requests, final seats included
        self.next_r = 0.0


class Ticket:
    """One request's place: waiting in a queue, then holding its seats."""

    __slots__ = ("arrived", "dispatched", "labels", "queue", "timer", "total", "waiter", "work")

    def __init__(
        self,
        queue: _Queue | None,
        arrived: float,
        work: WorkEstimate,
        labels: tuple[str, str] | None = None,
    ) -> None:
        self.queue = queue
        self.labels = labels  # (flow schema, level) for the metrics
        self.arrived = arrived
        self.dispatched = 0.0
        self.work = work
        # kube's total work in seat-seconds: the initial seats for the estimated service
        # time, the final ones for their additional latency.
        self.total = work.initial * ESTIMATED_SERVICE + work.final * work.latency
        self.waiter: Deferred[Ticket] | None = None
        self.timer: IDelayedCall | None = None


class QueueSet:
    """Seats of one limited level; ``queues == 0`` means reject when full (no queuing)."""

    def __init__(
        self,
        clock: IReactorTime,
        limit: int,
        queues: int = 0,
        hand_size: int = 1,
        queue_length_limit: int = 0,
    ) -> None:
        self.clock = clock
        self.limit = limit
        self.hand_size = min(hand_size, queues) if queues else 0
        self.queue_length_limit = queue_length_limit
        self.queues = [_Queue(i) for i in range(queues)]
        self._wanted_queues = queues
        self.executing = 0  # requests running
        self.waiting = 0
        self.seats = 0  # seats held, final seats included
        self.seats_waiting = 0
        self.virtual = 0.0
        self._last = clock.seconds()
        self._active = 0  # queues with a request waiting or executing
        self._robin = -1
        self._enqueues = 0
        self._hands: dict[int, list[_Queue]] = {}
        self.on_dispatch: Callable[[Ticket], None] | None = None
        self._demand = Integrator(self._last)
        self.timings: LevelTimings | None = None  # the level's timing ratio series
        # the last dispatch from a queue: (R, S, S bounds, discounted S bounds), as kube's
        # SetDispatchMetrics reports them
        self.dispatched: tuple[float, ...] | None = None

    def demand(self) -> tuple[float, float, float, float]:
        """Seat demand since the last call: (average, deviation, peak, duration)."""
        self._sync()
        return self._demand.reset(self._last, self.seats + self.seats_waiting)

    def reconfigure(self, limit: int, queues: int, hand_size: int, queue_length_limit: int) -> None:
        """New configuration; a new queue count is taken once nothing waits (as kube)."""
        self.queue_length_limit, self._wanted_queues = queue_length_limit, queues
        self.hand_size = min(hand_size, queues) if queues else 0
        self._hands.clear()
        self.set_limit(limit)

    def set_limit(self, limit: int) -> None:
        """The level's seats for now (borrowing moves them every period)."""
        self.limit = limit
        if self._wanted_queues != len(self.queues) and self.waiting == 0:
            self.queues = [_Queue(i) for i in range(self._wanted_queues)]
            self._active = 0  # seats held in the old queues are only counted in total
        self._dispatch()

    # -- virtual time ----------------------------------------------------------------------

    def _sync(self) -> None:
        now = self.clock.seconds()
        elapsed, self._last = now - self._last, now
        self._demand.add(self.seats + self.seats_waiting, elapsed)
        if self._active:
            wanted = min(self.seats + self.seats_waiting, self.limit)
            self.virtual += elapsed * wanted / self._active

    def _observe(self) -> None:
        if self.timings is not None:
            self.timings.observe(self.waiting, self.executing, self.seats, self.seats_waiting)

    # -- entering ----------------------------------------------------------------------------

    def enter(
        self, flow: int, work: WorkEstimate = ONE_SEAT, labels: tuple[str, str] | None = None
    ) -> Ticket:
        """A ticket holding its seats, or waiting for them (its ``waiter`` fires with
        it); ``Rejected`` raised when the level turns the request away.  ``labels``
        (flow schema, level) name it in the metrics."""
        self._sync()
        now = self.clock.seconds()
        if not self.queues:
            if not self._fits(work.seats):
                raise Rejected(CONCURRENCY_LIMIT)
            ticket = Ticket(None, now, work, labels)
            self._start(ticket)
            return ticket
        queue = self._choose(flow)
        ticket = Ticket(queue, now, work, labels)
        if self.waiting == 0 and self._fits(work.seats):
            if queue.executing == 0 and not queue.waiting:
                queue.next_r = self.virtual
                self._active += 1
            self._start(ticket)
            return ticket
        if self.seats >= self.limit and len(queue.waiting) >= self.queue_length_limit:
            raise Rejected(QUEUE_FULL)
        if not queue.waiting and not queue.executing:
            queue.next_r = self.virtual  # idle until now: no saved-up credit
            self._active += 1
        queue.waiting.append(ticket)
        queue.waiting_work += ticket.total
        self.waiting += 1
        self.seats_waiting += work.seats
        if labels is not None:
            QUEUE_LENGTH.observe(len(queue.waiting), *labels)
        ticket.waiter = Deferred(lambda _: self._leave(ticket))
        self._dispatch()  # seats may be free that the queue's head could not take
        self._observe()
        return ticket

    def _fits(self, seats: int) -> bool:
        """kube's canAccommodateSeats: within the limit, or alone when wider than it."""
        if seats > self.limit:
            return self.executing == 0
        return self.seats + seats <= self.limit

    def _choose(self, flow: int) -> _Queue:
        """The queue of the flow's hand with the least work waiting; kube starts the
        comparison one card further each time, so ties rotate."""
        hand = self._hands.get(flow)
        if hand is None:
            if len(self._hands) > 10000:
                self._hands.clear()
            deck = len(self.queues)  # the old queues until they drain after a change
            cards = deal(flow, deck, min(max(self.hand_size, 1), deck))
            hand = self._hands[flow] = [self.queues[c] for c in cards]
        offset = self._enqueues % len(hand)
        self._enqueues += 1
        best = hand[offset]
        for i in range(1, len(hand)):
            queue = hand[(offset + i) % len(hand)]
            if queue.waiting_work < best.waiting_work:
                best = queue
        return best

    def expire(self, ticket: Ticket, after: float) -> None:
        """Reject a waiting request with ``time-out`` if it still waits ``after`` s."""

        def timed_out() -> None:
            waiter, ticket.waiter = ticket.waiter, None
            self._leave(ticket)
            if waiter is not None:
                waiter.errback(Rejected(TIME_OUT))

        if ticket.waiter is not None:
            ticket.timer = self.clock.callLater(after, timed_out)

    def _leave(self, ticket: Ticket) -> None:
        """Out of the queue without a seat (timed out, or the client went away)."""
        queue = ticket.queue
        if ticket.timer is not None and ticket.timer.active():
            ticket.timer.cancel()
        if queue is None or ticket not in queue.waiting:
            return
        self._sync()
        self._unqueue(queue, ticket)
        queue.waiting.remove(ticket)
        if not queue.waiting and not queue.executing:
            self._active -= 1
        self._dispatch()  # a wide request that blocked the way may have gone
        self._observe()

    def _unqueue(self, queue: _Queue, ticket: Ticket) -> None:
        queue.waiting_work -= ticket.total
        self.waiting -= 1
        self.seats_waiting -= ticket.work.seats

    # -- seats ------------------------------------------------------------------------------

    def _start(self, ticket: Ticket) -> None:
        work = ticket.work
        if work.final > self.limit > 0:  # kube spreads the final work over the limit
            ticket.work = WorkEstimate(
                work.initial, self.limit, work.final * work.latency / self.limit
            )
        ticket.dispatched = self.clock.seconds()
        self.executing += 1
        self.seats += ticket.work.seats
        queue = ticket.queue
        if queue is not None:
            queue.executing += 1
            queue.seats += ticket.work.seats
            queue.next_r += ticket.total
        self._observe()
        if self.on_dispatch is not None:
            self.on_dispatch(ticket)

    def finish(self, ticket: Ticket) -> None:
        """The request is done: its seats go to the waiting requests, at once or, for a
        write's final seats, after its additional latency."""
        self._sync()
        self.executing -= 1
        queue = ticket.queue
        if queue is not None and self._owns(queue):
            queue.executing -= 1
            served = self.clock.seconds() - ticket.dispatched
            queue.next_r -= ticket.work.initial * (ESTIMATED_SERVICE - served)
            if not queue.waiting and not queue.executing:
                self._active -= 1
        work = ticket.work
        if work.latency > 0 and work.final > 0:
            self._observe()  # one request fewer now, its seats later
            self.clock.callLater(work.latency, self._release, work.seats, queue)
        else:
            self._release(work.seats, queue)

    def _release(self, seats: int, queue: _Queue | None = None) -> None:
        self._sync()
        self.seats -= seats
        if queue is not None:
            queue.seats -= seats
        self._dispatch()
        self._observe()

    def _owns(self, queue: _Queue) -> bool:
        return queue.index < len(self.queues) and self.queues[queue.index] is queue

    def _dispatch(self) -> None:
        while self.waiting and self.seats < self.limit:
            queue = self._next_queue()
            ticket = queue.waiting[0]
            if not self._fits(ticket.work.seats):
                if ticket.labels is not None:
                    NO_ACCOMMODATION.inc(*ticket.labels)
                return  # kube waits for seats rather than letting a narrower one pass
            self.dispatched = self._dispatch_gauges(queue)
            queue.waiting.popleft()
            self._unqueue(queue, ticket)
            if ticket.timer is not None and ticket.timer.active():
                ticket.timer.cancel()
            self._start(ticket)
            waiter, ticket.waiter = ticket.waiter, None
            if waiter is not None:
                waiter.callback(ticket)

    def _dispatch_gauges(self, chosen: _Queue) -> tuple[float, ...]:
        """(R, S of the dispatched, min and max S of the queues' heads, and the same less
        each queue's work in progress)."""
        heads = [q for q in self.queues if q.waiting]
        starts = [q.next_r for q in heads]
        discounted = [q.next_r - q.seats * ESTIMATED_SERVICE for q in heads]
        return (
            self.virtual,
            chosen.next_r,
            min(starts),
            max(starts),
            min(discounted),
            max(discounted),
        )

    def _next_queue(self) -> _Queue:
        """The non-empty queue whose head would finish first in virtual time, round
        robin on ties."""
        count = len(self.queues)
        best: _Queue | None = None
        best_finish = 0.0
        for step in range(1, count + 1):
            queue = self.queues[(self._robin + step) % count]
            if queue.waiting:
                finish = queue.next_r + queue.waiting[0].total
                if best is None or finish < best_finish:
                    best, best_finish = queue, finish
        assert best is not None
        self._robin = best.index
        return best
