"""Free values from a random start, each worker from its own share first."""

from __future__ import annotations

from platform_api.admission.allocation import Holds, pick_free


def test_every_free_value_is_found_and_a_full_range_is_none() -> None:
    used: set[int] = set()
    for _ in range(10):
        value = pick_free(10, used.__contains__)
        assert value is not None and value not in used
        used.add(value)
    assert used == set(range(10))
    assert pick_free(10, used.__contains__) is None
    assert pick_free(0, used.__contains__) is None


def test_a_worker_takes_its_share_then_the_rest() -> None:
    used: set[int] = set()
    picks = []
    for _ in range(10):
        value = pick_free(10, used.__contains__, (1, 2))
        assert value is not None
        picks.append(value)
        used.add(value)
    assert sorted(picks[:5]) == [1, 3, 5, 7, 9]  # its own share first
    assert sorted(picks[5:]) == [0, 2, 4, 6, 8]  # then whatever is free


def test_holds_last_until_their_service_is_stored_or_gone() -> None:
    now = [0.0]
    holds = Holds(10.0, clock=lambda: now[0])
    holds.hold([1, 2], ("ns", "a"))
    assert holds.pending(("ns", "b"), stored=set()) == {1, 2}
    assert holds.pending(("ns", "a"), stored=set()) == set()  # a Service's own
    assert holds.pending(("ns", "b"), stored={("ns", "a")}) == set()  # stored: storage says
    holds.release(("ns", "a"))
    assert holds.pending(("ns", "b"), stored=set()) == set()
    holds.hold([3], ("ns", "c"))
    now[0] = 10.0
    assert holds.pending(("ns", "b"), stored=set()) == set()  # a create that never landed
