"""Fair queuing for one priority level: kube's queueset, on the reactor thread.

Each flow (flow schema + distinguisher) is dealt a hand of ``handSize`` queues out of
``queues`` (shuffle sharding) and joins the shortest queue of its hand.  The level runs
at most ``limit`` requests at once (every request is one seat wide: kube's work
estimator is not used).  A free seat goes to the head of the queue with the smallest
virtual dispatch time: each queue advances by an estimated service time per dispatch,
corrected by the actual time when the request ends, and the virtual clock runs at
``min(seats wanted, limit) / active queues`` per real second, so a busy flow cannot push
ahead of quieter ones.  A queue that went idle restarts at the current virtual time
(no credit is saved up).  Waiting is a Deferred: it fires with the request's seat, or
fails with ``Rejected`` on timeout; cancelling it takes the request out of its queue.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from platform_api.apiserver.flowcontrol.borrowing import Integrator

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
    __slots__ = ("executing", "index", "next_r", "waiting")

    def __init__(self, index: int) -> None:
        self.index = index
        self.waiting: deque[Ticket] = deque()
        self.executing = 0
        self.next_r = 0.0


class Ticket:
    """One request's place: waiting in a queue, then holding a seat."""

    __slots__ = ("arrived", "dispatched", "queue", "timer", "waiter")

    def __init__(self, queue: _Queue | None, arrived: float) -> None:
        self.queue = queue
        self.arrived = arrived
        self.dispatched = 0.0
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
        self.executing = 0
        self.waiting = 0
        self.virtual = 0.0
        self._last = clock.seconds()
        self._active = 0  # queues with a request waiting or executing
        self._robin = -1
        self._hands: dict[int, list[_Queue]] = {}
        self.on_dispatch: Callable[[Ticket], None] | None = None
        self._demand = Integrator(self._last)

    def demand(self) -> tuple[float, float, float, float]:
        """Seat demand since the last call: (average, deviation, peak, duration)."""
        self._sync()
        return self._demand.reset(self._last, self.executing + self.waiting)

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
        self._demand.add(self.executing + self.waiting, elapsed)
        if self._active:
            wanted = min(self.executing + self.waiting, self.limit)
            self.virtual += elapsed * wanted / self._active

    # -- entering ----------------------------------------------------------------------------

    def enter(self, flow: int) -> Ticket:
        """A ticket holding a seat, or waiting for one (its ``waiter`` fires with it);
        ``Rejected`` raised when the level turns the request away."""
        self._sync()
        now = self.clock.seconds()
        if not self.queues:
            if self.executing >= self.limit:
                raise Rejected(CONCURRENCY_LIMIT)
            ticket = Ticket(None, now)
            self._start(ticket)
            return ticket
        queue = self._choose(flow)
        if self.waiting == 0 and self.executing < self.limit:
            ticket = Ticket(queue, now)
            if queue.executing == 0:
                queue.next_r = self.virtual
                self._active += 1
            self._start(ticket)
            return ticket
        if len(queue.waiting) >= self.queue_length_limit:
            raise Rejected(QUEUE_FULL)
        ticket = Ticket(queue, now)
        if not queue.waiting and not queue.executing:
            queue.next_r = self.virtual  # idle until now: no saved-up credit
            self._active += 1
        queue.waiting.append(ticket)
        self.waiting += 1
        ticket.waiter = Deferred(lambda _: self._leave(ticket))
        return ticket

    def _choose(self, flow: int) -> _Queue:
        hand = self._hands.get(flow)
        if hand is None:
            if len(self._hands) > 10000:
                self._hands.clear()
            deck = len(self.queues)  # the old queues until they drain after a change
            cards = deal(flow, deck, min(max(self.hand_size, 1), deck))
            hand = self._hands[flow] = [self.queues[c] for c in cards]
        best = hand[0]
        best_load = len(best.waiting) + best.executing
        for queue in hand[1:]:
            load = len(queue.waiting) + queue.executing
            if load < best_load:
                best, best_load = queue, load
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
        queue.waiting.remove(ticket)
        self.waiting -= 1
        if not queue.waiting and not queue.executing:
            self._active -= 1

    # -- seats ------------------------------------------------------------------------------

    def _start(self, ticket: Ticket) -> None:
        ticket.dispatched = self.clock.seconds()
        self.executing += 1
        queue = ticket.queue
        if queue is not None:
            queue.executing += 1
            queue.next_r += ESTIMATED_SERVICE
        if self.on_dispatch is not None:
            self.on_dispatch(ticket)

    def finish(self, ticket: Ticket) -> None:
        """The request is done: its seat goes to the next waiting request, if any."""
        self._sync()
        self.executing -= 1
        queue = ticket.queue
        if queue is not None and self._owns(queue):
            queue.executing -= 1
            queue.next_r += (self.clock.seconds() - ticket.dispatched) - ESTIMATED_SERVICE
            if not queue.waiting and not queue.executing:
                self._active -= 1
        self._dispatch()

    def _owns(self, queue: _Queue) -> bool:
        return queue.index < len(self.queues) and self.queues[queue.index] is queue

    def _dispatch(self) -> None:
        while self.waiting and self.executing < self.limit:
            queue = self._next_queue()
            ticket = queue.waiting.popleft()
            self.waiting -= 1
            if ticket.timer is not None and ticket.timer.active():
                ticket.timer.cancel()
            self._start(ticket)
            waiter, ticket.waiter = ticket.waiter, None
            if waiter is not None:
                waiter.callback(ticket)

    def _next_queue(self) -> _Queue:
        """The non-empty queue with the smallest virtual dispatch time, round robin on ties."""
        count = len(self.queues)
        best: _Queue | None = None
        for step in range(1, count + 1):
            queue = self.queues[(self._robin + step) % count]
            if queue.waiting and (best is None or queue.next_r < best.next_r):
                best = queue
        assert best is not None
        self._robin = best.index
        return best
