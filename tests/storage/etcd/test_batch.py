"""Reads that share etcd calls: at most one call out, later readers go together next."""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from platform_api.storage.etcd.batch import Batched


class Calls:
    """A stand-in for etcd: each call waits until the test answers it."""

    def __init__(self) -> None:
        self.made: list[tuple[list[str], Deferred[list[str]]]] = []

    def __call__(self, items: list[str]) -> Deferred[list[str]]:
        answer: Deferred[list[str]] = Deferred()
        self.made.append((items, answer))
        return answer

    def answer(self, index: int) -> None:
        items, answer = self.made[index]
        answer.callback([item.upper() for item in items])


def results(readers: list[Deferred[str]]) -> list[object]:
    seen: list[object] = []
    for reader in readers:
        reader.addBoth(seen.append)
    return seen


def test_readers_that_come_while_a_call_is_out_share_the_next_call() -> None:
    calls = Calls()
    batched: Batched[str, str] = Batched(calls, most=128)
    first = batched("a")
    later = [batched(item) for item in ("b", "c", "d")]
    assert [items for items, _ in calls.made] == [["a"]]
    seen = results([first, *later])
    calls.answer(0)
    assert seen == ["A"]  # the later readers did not get the first call's answer
    assert [items for items, _ in calls.made] == [["a"], ["b", "c", "d"]]
    calls.answer(1)
    assert seen == ["A", "B", "C", "D"]


def test_a_batch_holds_at_most_so_many_readers() -> None:
    calls = Calls()
    batched: Batched[str, str] = Batched(calls, most=2)
    readers = [batched(item) for item in "abcde"]
    seen = results(readers)
    for index in range(3):
        calls.answer(index)
    assert [items for items, _ in calls.made] == [["a"], ["b", "c"], ["d", "e"]]
    assert seen == ["A", "B", "C", "D", "E"]


def test_a_failed_call_fails_its_readers_only() -> None:
    calls = Calls()
    batched: Batched[str, str] = Batched(calls, most=128)
    first, second = batched("a"), batched("b")
    seen = results([first, second])
    calls.made[0][1].errback(ConnectionError("etcd went away"))
    assert isinstance(seen[0], Failure) and seen[0].check(ConnectionError)
    calls.answer(1)
    assert seen[1:] == ["B"]


def test_a_reader_may_read_again_from_its_callback() -> None:
    calls = Calls()
    batched: Batched[str, str] = Batched(calls, most=128)
    again: list[Deferred[str]] = []
    batched("a").addCallback(lambda _: again.append(batched("b")))
    calls.answer(0)
    assert [items for items, _ in calls.made] == [["a"], ["b"]]
    seen = results(again)
    calls.answer(1)
    assert seen == ["B"]
