"""Fair queuing for one level: seats, queues, rejections and fairness between flows."""

from __future__ import annotations

import pytest
from twisted.internet.defer import CancelledError
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from platform_api.apiserver.flowcontrol.estimate import WorkEstimate
from platform_api.apiserver.flowcontrol.metrics import NO_ACCOMMODATION, QUEUE_LENGTH
from platform_api.apiserver.flowcontrol.queueset import (
    CONCURRENCY_LIMIT,
    QUEUE_FULL,
    TIME_OUT,
    QueueSet,
    Rejected,
    Ticket,
    deal,
    flow_hash,
)

A, B = flow_hash("schema", "alice"), flow_hash("schema", "bob")


def test_a_hand_is_distinct_cards_of_the_deck() -> None:
    for value in (0, 1, 2**63 + 12345, flow_hash("x", "y")):
        hand = deal(value, 128, 6)
        assert len(set(hand)) == 6
        assert all(0 <= card < 128 for card in hand)
    assert sorted(deal(flow_hash("a", "b"), 5, 5)) == [0, 1, 2, 3, 4]


def test_requests_under_the_limit_run_at_once() -> None:
    qs = QueueSet(Clock(), limit=2, queues=8, hand_size=2, queue_length_limit=5)
    first, second = qs.enter(A), qs.enter(A)
    assert first.waiter is None and second.waiter is None
    assert qs.executing == 2
    third = qs.enter(A)
    assert third.waiter is not None and qs.waiting == 1
    qs.finish(first)
    assert third.waiter is None  # dispatched: its Deferred fired
    assert qs.executing == 2 and qs.waiting == 0


def test_waiting_request_gets_the_freed_seat() -> None:
    qs = QueueSet(Clock(), limit=1, queues=4, hand_size=1, queue_length_limit=5)
    running = qs.enter(A)
    waiting = qs.enter(A)
    assert waiting.waiter is not None
    got: list[Ticket] = []
    waiting.waiter.addCallback(got.append)
    qs.finish(running)
    assert got == [waiting]


def test_full_queue_rejects() -> None:
    qs = QueueSet(Clock(), limit=1, queues=1, hand_size=1, queue_length_limit=2)
    qs.enter(A)
    qs.enter(A)
    qs.enter(A)
    with pytest.raises(Rejected) as caught:
        qs.enter(A)
    assert caught.value.reason == QUEUE_FULL


def test_reject_level_has_no_queue() -> None:
    qs = QueueSet(Clock(), limit=1)
    qs.enter(A)
    with pytest.raises(Rejected) as caught:
        qs.enter(B)
    assert caught.value.reason == CONCURRENCY_LIMIT


def test_waiting_too_long_times_out() -> None:
    clock = Clock()
    qs = QueueSet(clock, limit=1, queues=2, hand_size=1, queue_length_limit=5)
    qs.enter(A)
    waiting = qs.enter(A)
    assert waiting.waiter is not None
    failures: list[BaseException | None] = []

    def failed(failure: Failure) -> None:
        failures.append(failure.value)

    waiting.waiter.addErrback(failed)
    qs.expire(waiting, 15.0)
    clock.advance(14.9)
    assert not failures
    clock.advance(0.2)
    assert isinstance(failures[0], Rejected) and failures[0].reason == TIME_OUT
    assert qs.waiting == 0


def test_cancelled_waiter_leaves_its_queue() -> None:
    clock = Clock()
    qs = QueueSet(clock, limit=1, queues=2, hand_size=1, queue_length_limit=5)
    running = qs.enter(A)
    waiting = qs.enter(A)
    assert waiting.waiter is not None
    waiting.waiter.addErrback(lambda f: f.trap(CancelledError))
    qs.expire(waiting, 15.0)
    waiting.waiter.cancel()
    assert qs.waiting == 0
    assert not clock.getDelayedCalls()  # the wait timer went with it
    qs.finish(running)
    assert qs.executing == 0


def test_a_quiet_flow_is_served_before_a_flooding_one() -> None:
    """Alice queues 30 requests, then Bob 3: Bob's are dispatched among the next few
    seats, not after all of Alice's (fair queuing by virtual finish time)."""
    clock = Clock()
    qs = QueueSet(clock, limit=2, queues=64, hand_size=4, queue_length_limit=50)
    running = [qs.enter(A), qs.enter(A)]
    order: list[str] = []

    def dispatched(ticket: Ticket, name: str) -> None:
        order.append(name)
        running.append(ticket)

    for i in range(30):
        t = qs.enter(A)
        assert t.waiter is not None
        t.waiter.addCallback(dispatched, f"a{i}")
    for i in range(3):
        t = qs.enter(B)
        assert t.waiter is not None
        t.waiter.addCallback(dispatched, f"b{i}")
    while running:
        clock.advance(0.01)
        qs.finish(running.pop(0))
    assert len(order) == 33
    bob = [order.index(f"b{i}") for i in range(3)]
    assert max(bob) < 8, order[:10]


def test_reconfigured_limit_dispatches_waiting_requests() -> None:
    qs = QueueSet(Clock(), limit=1, queues=4, hand_size=2, queue_length_limit=5)
    qs.enter(A)
    waiting = qs.enter(B)
    qs.reconfigure(2, 4, 2, 5)
    assert waiting.waiter is None and qs.executing == 2


def test_new_queue_count_waits_until_the_queues_drain() -> None:
    qs = QueueSet(Clock(), limit=1, queues=4, hand_size=2, queue_length_limit=5)
    running = qs.enter(A)
    qs.enter(B)
    qs.reconfigure(1, 0, 0, 0)  # now Reject: the waiting request keeps its queue
    assert len(qs.queues) == 4
    with pytest.raises(Rejected):  # nothing more is queued
        qs.enter(A)
    qs.finish(running)  # B's request runs: no request waits, the queues go
    assert qs.executing == 1
    qs.set_limit(1)
    assert qs.waiting == 0 and len(qs.queues) == 0


def test_a_wide_request_waits_for_all_its_seats() -> None:
    qs = QueueSet(Clock(), limit=4, queues=1, hand_size=1, queue_length_limit=5)
    narrow = [qs.enter(A), qs.enter(A)]
    wide = qs.enter(B, WorkEstimate(3))
    assert wide.waiter is not None and qs.seats == 2 and qs.seats_waiting == 3
    behind = qs.enter(B)  # a seat is free, but the wide request is first in the queue
    assert behind.waiter is not None
    qs.finish(narrow[0])
    assert wide.waiter is None and qs.seats == 4  # 1 + 3
    assert behind.waiter is not None
    qs.finish(narrow[1])
    qs.finish(wide)
    assert behind.waiter is None and qs.seats == 1 and qs.seats_waiting == 0


def test_a_request_wider_than_the_level_runs_alone() -> None:
    qs = QueueSet(Clock(), limit=2, queues=8, hand_size=2, queue_length_limit=5)
    running = qs.enter(A)
    wide = qs.enter(B, WorkEstimate(10))
    assert wide.waiter is not None
    qs.finish(running)
    assert wide.waiter is None and qs.seats == 10
    after = qs.enter(A)
    assert after.waiter is not None
    qs.finish(wide)
    assert after.waiter is None


def test_a_writes_final_seats_are_kept_for_its_additional_latency() -> None:
    clock = Clock()
    qs = QueueSet(clock, limit=3, queues=8, hand_size=2, queue_length_limit=5)
    write = qs.enter(A, WorkEstimate(1, 3, 0.005))
    assert qs.seats == 3
    waiting = qs.enter(B)
    assert waiting.waiter is not None
    qs.finish(write)
    assert qs.executing == 0 and qs.seats == 3 and waiting.waiter is not None
    clock.advance(0.005)
    assert waiting.waiter is None and qs.seats == 1


def test_final_seats_over_the_limit_are_spread_over_it() -> None:
    """kube keeps at most the level's seats and holds them longer: the same work."""
    clock = Clock()
    qs = QueueSet(clock, limit=2, queues=8, hand_size=2, queue_length_limit=5)
    write = qs.enter(A, WorkEstimate(1, 10, 0.005))
    assert write.work == WorkEstimate(1, 2, 0.025)
    qs.finish(write)
    clock.advance(0.02)
    assert qs.seats == 2
    clock.advance(0.005)
    assert qs.seats == 0


def test_a_reject_level_refuses_what_does_not_fit() -> None:
    qs = QueueSet(Clock(), limit=4)
    qs.enter(A, WorkEstimate(3))
    with pytest.raises(Rejected) as caught:
        qs.enter(B, WorkEstimate(2))
    assert caught.value.reason == CONCURRENCY_LIMIT
    qs.enter(B)
    assert qs.seats == 4


def test_a_queue_is_full_only_while_every_seat_is_held() -> None:
    """kube refuses with queue-full when the seats are all in use and the flow's queue
    is at its length limit; with seats free a request queues behind a wide one."""
    qs = QueueSet(Clock(), limit=4, queues=1, hand_size=1, queue_length_limit=1)
    qs.enter(A, WorkEstimate(2))
    qs.enter(A, WorkEstimate(4))  # waits for four seats: two are free
    behind = qs.enter(A)  # the queue is at its limit, but seats are free
    assert behind.waiter is not None and qs.waiting == 2
    full = QueueSet(Clock(), limit=4, queues=1, hand_size=1, queue_length_limit=1)
    full.enter(A, WorkEstimate(4))
    assert full.enter(A).waiter is not None
    with pytest.raises(Rejected) as caught:
        full.enter(A)
    assert caught.value.reason == QUEUE_FULL


def test_a_head_that_does_not_fit_is_counted_and_dispatch_clocks_are_kept() -> None:
    """kube's request_dispatch_no_accommodation_total, request_queue_length_after_enqueue
    and the R and S gauges of the last dispatch from a queue."""
    labels = ("schema", "level")
    NO_ACCOMMODATION.clear()
    QUEUE_LENGTH.clear()
    clock = Clock()
    qs = QueueSet(clock, limit=2, queues=2, hand_size=1, queue_length_limit=5)
    narrow = qs.enter(A, WorkEstimate(1, 0, 0), labels)
    wide = qs.enter(B, WorkEstimate(2, 0, 0), labels)  # 1 + 2 seats > 2: it waits
    assert wide.waiter is not None and qs.dispatched is None
    assert NO_ACCOMMODATION.values[labels] == 1
    assert QUEUE_LENGTH.values[labels][1] == 1  # a queue of one: the bucket up to 10
    clock.advance(1.0)
    qs.finish(narrow)
    assert wide.waiter is None
    assert qs.dispatched is not None
    r, s, s_min, s_max, ds_min, ds_max = qs.dispatched
    assert r == qs.virtual > 0
    assert s_min == s == s_max  # the only queue with a head
    assert ds_min == ds_max == s  # nothing of that queue was running
