"""A resource's history sizes itself as kube's watchCacheHistory does."""

from __future__ import annotations

from platform_api.storage.etcd.history import ResourceHistory
from platform_api.storage.interface import ADDED, Event, Stored

KEY = b"/core/configmaps/ns/a"


def _add(history: ResourceHistory, revisions: range, at: float) -> None:
    for revision in revisions:
        history.add(Event(ADDED, revision, KEY, Stored(KEY, revision, b"{}"), None), at)


def _kept(history: ResourceHistory) -> list[int]:
    return [e.revision for e in history.since(0)]


def test_a_full_history_of_fresh_events_doubles_up_to_its_bound() -> None:
    history = ResourceHistory(10, lower=4, upper=16, fresh=75.0)
    _add(history, range(11, 21), at=0.0)
    assert (history.capacity, len(history), history.floor) == (16, 10, 10)
    _add(history, range(21, 31), at=1.0)  # 20 events: the bound is reached, the oldest go
    assert (history.capacity, len(history)) == (16, 16)
    assert _kept(history) == list(range(15, 31))
    assert history.floor == 14  # kube's oldest-1


def test_a_full_history_whose_newest_quarter_is_stale_halves() -> None:
    history = ResourceHistory(0, lower=4, upper=16, fresh=75.0)
    _add(history, range(1, 17), at=0.0)
    assert history.capacity == 16
    _add(history, range(17, 18), at=100.0)  # every event kept is older than 75 s
    assert (history.capacity, _kept(history)) == (8, list(range(10, 18)))
    assert history.floor == 9


def test_a_quiet_history_keeps_its_last_events_for_good() -> None:
    """Neither fresh at its oldest nor stale in its newest quarter: the oldest gives way."""
    history = ResourceHistory(0, lower=4, upper=16, fresh=75.0)
    _add(history, range(1, 4), at=0.0)
    _add(history, range(4, 5), at=100.0)
    _add(history, range(5, 7), at=110.0)
    assert (history.capacity, _kept(history), history.floor) == (4, [3, 4, 5, 6], 2)
    _add(history, range(7, 8), at=10_000.0)  # hours later, one more: still the last four
    assert (history.capacity, _kept(history)) == (4, [4, 5, 6, 7])


def test_reads_bisect_from_the_oldest_kept_event() -> None:
    history = ResourceHistory(0, lower=4, upper=4)
    _add(history, range(2, 20, 2), at=0.0)  # 2..18, the last four kept: 12..18
    assert [e.revision for e in history.since(13)] == [14, 16, 18]
    assert [e.revision for e in history.since(11)] == [12, 14, 16, 18]
    assert [e.revision for e in history.newest_first()] == [18, 16, 14, 12]
    assert history.floor == 11
