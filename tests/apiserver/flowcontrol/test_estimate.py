"""kube's work estimator: list seats by size, write seats by watchers, the level's cap."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from twisted.internet.task import Clock

from platform_api.apiserver import requestinfo
from platform_api.apiserver.flowcontrol import estimate
from platform_api.apiserver.flowcontrol.estimate import (
    ONE_SEAT,
    UNBOUNDED,
    ObjectStats,
    Stats,
    WatchCounts,
    WorkEstimate,
    WorkEstimator,
    level_max_seats,
)
from platform_api.apiserver.flowcontrol.metrics import WATCH_COUNT, WORK_SEATS
from platform_api.registry.flowcontrol_bootstrap import GROUP
from platform_api.storage.interface import ListOptions, ListResult, Storage
from tests.apiserver.flowcontrol.conftest import World

LABELS = ("schema", "level")


class FixedStats(ObjectStats):
    def __init__(self, known: dict[tuple[str, str], Stats]) -> None:
        self.known = known

    def get(self, group: str, resource: str) -> Stats | None:
        return self.known.get((group, resource))


def _estimator(count: int, total: int, watches: WatchCounts | None = None) -> WorkEstimator:
    stats = Stats(count, total // count if count else 0)
    return WorkEstimator(FixedStats({("", "configmaps"): stats}), watches or WatchCounts())


def _estimate(
    estimator: WorkEstimator, method: str, path: str, query: str = "", level_max: int = 0
) -> WorkEstimate:
    args = _args(query)
    info = requestinfo.parse(method.encode(), path, args)
    return estimator.estimate(info, args, level_max, LABELS)


LIST = "/api/v1/namespaces/a/configmaps"


def _args(query: str) -> dict[bytes, list[bytes]]:
    return {k.encode(): [v.encode() for v in vs] for k, vs in parse_qs(query).items()}


# kube's list_work_estimator_test cases (size-based), as requests: a list with no
# resourceVersion or with NotOlderThan is served by the watch cache, one with a limit
# and an exact resourceVersion by storage.
STORAGE = "resourceVersion=5&resourceVersionMatch=Exact"
KUBE_CASES = [
    (99, 100_000 - 1, STORAGE, 1),
    (99, 100_000 - 1, "", 1),
    (1000, 1_000_000 - 1, STORAGE, 10),
    (1000, 1_000_000 - 1, STORAGE + "&limit=100", 1),
    (1000, 1_000_000 - 1, STORAGE + "&limit=100&labelSelector=a", 5),
    (1000, 1_000_000 - 1, "", 10),
    (1000, 1_000_000 - 1, "limit=100", 1),
    (99, 1_000_000 - 1, STORAGE, 10),
    (99, 1_000_000 - 1, STORAGE + "&limit=10&labelSelector=a", 5),
    (1000, 10_000_000 - 1, STORAGE, 100),
    (1000, 10_000_000 - 1, STORAGE + "&limit=100&labelSelector=a", 50),
    (1000, 10_000_000 - 1, "", 10),  # the watch cache streams: at most 1 MB at once
    (99, 10_000_000 - 1, "limit=10", 10),
]


@pytest.mark.parametrize(("count", "total", "query", "seats"), KUBE_CASES)
def test_a_list_takes_a_seat_per_100kb_it_holds(
    count: int, total: int, query: str, seats: int
) -> None:
    assert _estimate(_estimator(count, total), "GET", LIST, query) == WorkEstimate(seats)


def test_which_lists_the_watch_cache_serves() -> None:
    """kube's delegator: a limit with a resourceVersion, a continue token, Exact, or an
    unknown match go to storage; consistent and NotOlderThan reads to the cache."""
    big = _estimator(1000, 10_000_000)
    from_cache = WorkEstimate(10)
    assert _estimate(big, "GET", LIST, "resourceVersion=0&limit=500") == from_cache
    assert _estimate(big, "GET", LIST, "limit=500") == WorkEstimate(10)
    assert _estimate(big, "GET", LIST, "resourceVersion=7&limit=500") == WorkEstimate(50)
    assert _estimate(big, "GET", LIST, "resourceVersionMatch=NotOlderThan") == from_cache
    assert _estimate(big, "GET", LIST, "continue=abc&limit=500") == WorkEstimate(50)
    assert _estimate(big, "GET", LIST, "resourceVersionMatch=Other") == WorkEstimate(100)


def test_a_list_of_one_name_holds_one_object() -> None:
    """Of 1000 objects of 1 MB on average, one is held: 10 seats (kube's matchesSingle)."""
    big = _estimator(1000, 1_000_000_000)
    assert _estimate(big, "GET", LIST, "fieldSelector=metadata.name%3Dx") == WorkEstimate(10)
    assert _estimate(big, "GET", LIST, "fieldSelector=metadata.name!%3Dx") == WorkEstimate(10)
    assert _estimate(big, "GET", LIST, STORAGE + "&fieldSelector=metadata.name%3Dx") == (
        WorkEstimate(10)
    )
    assert _estimate(big, "GET", LIST, STORAGE) == WorkEstimate(100)


def test_watches_that_list_first_are_estimated_as_lists() -> None:
    """With WatchList on (kube 1.36), a watch that sends the current state first is a
    list from the cache; one from a revision takes one seat."""
    big = _estimator(1000, 10_000_000)
    assert _estimate(big, "GET", LIST, "watch=1") == WorkEstimate(10)
    assert _estimate(big, "GET", LIST, "watch=1&resourceVersion=0") == WorkEstimate(10)
    assert _estimate(big, "GET", LIST, "watch=1&resourceVersion=9") == ONE_SEAT
    query = "watch=1&resourceVersion=9&sendInitialEvents=true"
    assert _estimate(big, "GET", LIST, query) == WorkEstimate(10)


def test_unknown_resources_and_unreadable_limits() -> None:
    """A resource with no count takes the minimum (kube: not found); options kube cannot
    convert take the most its level allows."""
    big = _estimator(1000, 10_000_000)
    assert _estimate(big, "GET", "/api/v1/namespaces/a/secrets") == ONE_SEAT
    assert _estimate(big, "GET", LIST, "limit=x") == WorkEstimate(100)
    assert _estimate(big, "GET", LIST, "limit=x", level_max=8) == WorkEstimate(8)
    assert _estimate(big, "GET", LIST, STORAGE, level_max=8) == WorkEstimate(8)


def test_objects_of_unknown_size_count_as_the_largest() -> None:
    estimator = WorkEstimator(FixedStats({("", "configmaps"): Stats(3, 0)}), WatchCounts())
    assert _estimate(estimator, "GET", LIST, STORAGE) == WorkEstimate(45)


def test_other_verbs_take_one_seat() -> None:
    big = _estimator(1000, 10_000_000)
    assert _estimate(big, "GET", LIST + "/x") == ONE_SEAT
    assert _estimate(big, "DELETE", LIST) == ONE_SEAT  # deletecollection


def _watch(watches: WatchCounts, path: str, query: str = "") -> None:
    args = _args("watch=1&" + query)
    watches.register(requestinfo.parse(b"GET", path, args))


def test_a_write_keeps_a_seat_per_ten_watches_for_5ms() -> None:
    watches = WatchCounts()
    estimator = _estimator(1, 100, watches)
    for _ in range(9):
        _watch(watches, LIST)
    assert _estimate(estimator, "PUT", LIST + "/x") == ONE_SEAT
    for _ in range(16):
        _watch(watches, "/api/v1/configmaps")  # cluster-wide watches hear it too
    _watch(watches, "/api/v1/namespaces/b/configmaps")  # other namespaces do not
    _watch(watches, LIST + "/y")  # nor watches of another name
    assert _estimate(estimator, "PUT", LIST + "/x") == WorkEstimate(1, 3, 0.005)
    assert _estimate(estimator, "POST", LIST) == WorkEstimate(1, 3, 0.005)


def test_a_write_heard_by_many_spreads_its_work_over_the_levels_maximum() -> None:
    watches = WatchCounts()
    for _ in range(200):
        _watch(watches, LIST)
    estimator = _estimator(1, 100, watches)
    assert _estimate(estimator, "PATCH", LIST + "/x") == WorkEstimate(1, 10, 0.01)
    assert _estimate(estimator, "DELETE", LIST + "/x", level_max=4) == WorkEstimate(1, 4, 0.025)
    token = "/api/v1/namespaces/a/serviceaccounts/default/token"
    assert _estimate(estimator, "POST", token) == ONE_SEAT


def test_a_kubelets_pod_watch_is_not_counted() -> None:
    watches = WatchCounts()
    for _ in range(20):
        _watch(watches, "/api/v1/pods", "fieldSelector=spec.nodeName%3Dn1")
    write = requestinfo.parse(b"PUT", "/api/v1/namespaces/a/pods/p", {})
    assert watches.interested(write) == 0
    _watch(watches, "/api/v1/pods", "fieldSelector=spec.nodeName!%3Dn1")
    assert watches.interested(write) == 1


def test_forgotten_watches_no_longer_count() -> None:
    watches = WatchCounts()
    args = {b"watch": [b"1"]}
    forget = watches.register(requestinfo.parse(b"GET", LIST, args))
    write = requestinfo.parse(b"DELETE", LIST + "/x", {})
    assert watches.interested(write) == 1
    assert watches.interested(requestinfo.parse(b"GET", LIST + "/x", {})) == 0  # a read
    forget()
    assert watches.interested(write) == 0


def test_estimates_are_recorded_as_kube_records_them() -> None:
    """The seats in apiserver_flowcontrol_work_estimated_seats (buckets 1..100) and a
    write's interested watches in apiserver_flowcontrol_watch_count_samples."""
    WORK_SEATS.clear()
    WATCH_COUNT.clear()
    watches = WatchCounts()
    for _ in range(12):
        _watch(watches, LIST)
    estimator = _estimator(1000, 10_000_000, watches)
    _estimate(estimator, "GET", LIST, STORAGE)
    _estimate(estimator, "PUT", LIST + "/x")
    _estimate(estimator, "GET", LIST + "/x")
    # per bucket 1, 2, 4, 8, 16, 32, 64, 100, +Inf, then the sum
    assert WORK_SEATS.values[LABELS] == [1, 1, 0, 0, 0, 0, 0, 1, 0, 103]
    assert WATCH_COUNT.values[LABELS] == [0, 0, 0, 1, 0, 0, 0, 12]


@pytest.mark.parametrize(
    ("nominal", "hand", "seats"),
    [(245, 6, 37), (49, 6, 8), (3, 1, 1), (0, 8, 1), (100, 64, 1), (1000, 8, 125)],
)
def test_a_levels_maximum(nominal: int, hand: int, seats: int) -> None:
    assert level_max_seats(nominal, hand) == seats


def test_counts_and_sizes_are_read_from_storage(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of each resource gives the sizes, the keys after it the rest of the count."""
    stats = world.estimator.stats
    stats.refresh()
    counted = stats.get(GROUP, "flowschemas")
    assert counted is not None and counted.count > 10  # kube's bootstrap schemas
    assert 300 < counted.average_size < 3000
    assert stats.get("", "configmaps") is None  # not one of the world's stores
    monkeypatch.setattr(estimate, "SIZE_SAMPLE", 3)
    stats.refresh()
    sampled = stats.get(GROUP, "flowschemas")
    assert sampled is not None and sampled.count == counted.count


class _Failing:
    """A storage whose reads fail once ``broken`` (etcd gone away, say)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.broken = False

    def get_list(self, prefix: bytes, options: ListOptions) -> ListResult:
        if self.broken:
            raise OSError("unreachable")
        return self.storage.get_list(prefix, options)


def test_a_count_that_cannot_be_read_goes_stale(world: World) -> None:
    """A resource that cannot be counted keeps its last count for 3 minutes, then counts
    as unbounded (kube: a stale count): its lists take the most their level allows."""
    clock = Clock()
    storage = _Failing(world.schemas.storage)
    stats = ObjectStats(storage, lambda: [world.schemas], clock.seconds)  # type: ignore[arg-type]
    stats.refresh()
    counted = stats.get(GROUP, "flowschemas")
    assert counted is not None and counted.count > 10
    storage.broken = True
    clock.advance(120)
    stats.refresh()
    assert stats.get(GROUP, "flowschemas") == counted
    clock.advance(61)
    assert stats.get(GROUP, "flowschemas") == UNBOUNDED
    estimator = WorkEstimator(stats, WatchCounts())
    info = requestinfo.parse(b"GET", f"/apis/{GROUP}/v1/flowschemas", {})
    assert estimator.estimate(info, {}, 0, LABELS) == WorkEstimate(10)  # 1 MB from cache
    storage.broken = False
    stats.refresh()
    assert stats.get(GROUP, "flowschemas") == counted
