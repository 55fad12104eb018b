"""ProgressRequester: progress requests while a consistent read waits (fake clock)."""

from __future__ import annotations

from typing import Any

from twisted.internet.task import Clock

from platform_api.storage.etcd.watch import PROGRESS_RETRY, ProgressRequester


class CountingWatch:
    def __init__(self) -> None:
        self.requests = 0

    def request_progress(self) -> None:
        self.requests += 1


def test_asks_once_then_again_while_a_reader_waits() -> None:
    clock, waiting = Clock(), [True]
    requester = ProgressRequester(clock, lambda: waiting[0])
    watch: Any = CountingWatch()
    requester.watch = watch
    requester.request()
    requester.request()  # one outstanding at a time
    assert watch.requests == 1
    clock.advance(PROGRESS_RETRY)  # etcd may have dropped it (the stream was catching up)
    assert watch.requests == 2
    waiting[0] = False
    clock.advance(PROGRESS_RETRY)
    clock.advance(PROGRESS_RETRY)
    assert watch.requests == 2 and clock.getDelayedCalls() == []


def test_a_request_before_the_watch_exists_is_sent_once_it_does() -> None:
    clock = Clock()
    requester = ProgressRequester(clock, lambda: True)
    requester.request()  # the watch is being made
    watch: Any = CountingWatch()
    requester.watch = watch
    clock.advance(PROGRESS_RETRY)
    assert watch.requests == 1
    requester.stop()
    assert clock.getDelayedCalls() == []
