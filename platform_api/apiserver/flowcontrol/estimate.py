"""kube's work estimator: how many of its level's seats a request takes, and how many
it keeps for a while after it ends.

A list (and a watch that starts with the current state) takes one seat per 100 KB it
is estimated to hold in memory at once: the resource's object count and average stored
size (``ObjectStats``, refreshed every ``--etcd-count-metric-poll-period``), the page limit,
and whether the watch cache serves it (then at most 1 MB: it streams) or the database
(a selector there reads half the objects at least).  A write takes one seat, and after
it ends keeps one seat per 10 watches of what it changed for 5 ms each, the time their
events take to send.  Each is bounded by the level's own maximum, 15% of its nominal
seats and no more than its nominal seats per hand (``level_max_seats``).  The
``SizeBasedListCostEstimate`` gate is on in kube 1.36, so it is the size-based rule.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from twisted.logger import Logger

from platform_api.apiserver.flowcontrol.metrics import WATCH_COUNT, WORK_SEATS
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.fieldselectors import parse_field_selector
from platform_api.selectors import SelectorError
from platform_api.storage.interface import ListOptions, Storage

log = Logger()
MIN_SEATS = 1
MAX_LIST_SEATS = 100
MAX_MUTATING_SEATS = 10
WATCHES_PER_SEAT = 10
EVENT_ADDITIONAL_LATENCY = 0.005
BYTES_PER_SEAT = 100_000
CACHE_STREAMING_MEMORY = 1_000_000
MAX_OBJECT_SIZE = 1_500_000
MAX_SEATS_FRACTION = 0.15
SIZE_SAMPLE = 100  # objects read per resource to estimate its average size
STALE_AFTER = 180.0  # kube's staleTolerationThreshold
_READONLY = ("get", "list", "watch", "proxy")
Args = dict[bytes, list[bytes]]
GroupResource = tuple[str, str]


@dataclass(frozen=True, slots=True)
class WorkEstimate:
    initial: int = MIN_SEATS
    final: int = 0
    latency: float = 0.0  # seconds the final seats are kept after the request ends

    @property
    def seats(self) -> int:
        return max(self.initial, self.final)


ONE_SEAT = WorkEstimate()


def level_max_seats(nominal: int, hand_size: int) -> int:
    """kube's cap for a queuing level: 15% of its nominal seats, at most its nominal
    seats per hand, at least 1."""
    return max(1, min(math.ceil(nominal * MAX_SEATS_FRACTION), nominal // max(1, hand_size)))


@dataclass(frozen=True, slots=True)
class Stats:
    count: int
    average_size: int


UNBOUNDED = Stats(1_000_000_000, MAX_OBJECT_SIZE)  # kube's stand-in for a stale count


class ObjectStats:
    """Object count and average stored size per (group, resource), read by ``refresh``
    (each resource's keys counted, the sizes of its first SIZE_SAMPLE objects averaged:
    one page of a list, and the count of the rest).  A resource that could not be read
    for STALE_AFTER seconds counts as unbounded, as kube's tracker takes a stale count."""

    def __init__(
        self,
        storage: Storage,
        resources: Callable[[], Iterable[Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._storage = storage
        self._resources = resources  # the stores: each has .prefix and .resource
        self._clock = clock
        self._stats: dict[GroupResource, tuple[Stats, float]] = {}

    def get(self, group: str, resource: str) -> Stats | None:
        known = self._stats.get((group, resource))
        if known is None:
            return None
        stats, read_at = known
        return UNBOUNDED if self._clock() - read_at > STALE_AFTER else stats

    def refresh(self) -> None:
        stats: dict[GroupResource, tuple[Stats, float]] = {}
        now = self._clock()
        for store in list(self._resources()):
            name = (store.resource.group, store.resource.plural)
            if name in stats:
                continue  # every version of a resource shares its prefix
            try:  # the first page, and how many keys follow it
                page = self._storage.get_list(store.prefix, ListOptions(limit=SIZE_SAMPLE))
            except Exception:
                log.failure("counting {name} for the work estimator", name=name)
                if name in self._stats:
                    stats[name] = self._stats[name]  # ages until it goes stale
                continue
            sample = page.items
            size = sum(len(item.data) for item in sample) // len(sample) if sample else 0
            count = len(sample) + (page.remaining or 0)
            stats[name] = (Stats(count, size), now)
        self._stats = stats


class WatchCounts:
    """kube's watch tracker: open watches by group, resource, namespace and name; a
    write's interested watches are those of its resource cluster-wide, in its namespace
    and of its name.  A pod watch that selects one node (a kubelet's) is not counted."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str, str], int] = {}

    def register(self, info: RequestInfo) -> Callable[[], None]:
        if info.resource == "pods" and _node_selected(info.field_selector):
            return _nothing
        key = (info.api_group, info.resource, info.namespace, info.name)
        self._counts[key] = self._counts.get(key, 0) + 1

        def forget() -> None:
            left = self._counts.get(key, 0) - 1
            if left > 0:
                self._counts[key] = left
            else:
                self._counts.pop(key, None)

        return forget

    def interested(self, info: RequestInfo) -> int:
        if info.verb in _READONLY:
            return 0
        group, resource, counts = info.api_group, info.resource, self._counts
        total = counts.get((group, resource, "", ""), 0)
        if info.namespace:
            total += counts.get((group, resource, info.namespace, ""), 0)
        if info.name:
            total += counts.get((group, resource, info.namespace, info.name), 0)
        return total


def _nothing() -> None:
    return None


def _node_selected(selector: str) -> bool:
    """Whether a field selector requires one ``spec.nodeName`` (kube's pod index); one
    that does not parse selects none (kube counts that watch)."""
    try:
        return bool(parse_field_selector(selector).exact("spec.nodeName"))
    except SelectorError:
        return False


class WorkEstimator:
    """Estimates by verb: list and initial-state watch by size, writes by watchers."""

    def __init__(self, stats: ObjectStats, watches: WatchCounts) -> None:
        self.stats = stats
        self.watches = watches

    def estimate(
        self, info: RequestInfo, args: Args, level_max: int, labels: tuple[str, str]
    ) -> WorkEstimate:
        """The request's estimate within its level's ``level_max`` (0: no cap of its
        own), recorded under its (flow schema, priority level) ``labels`` as kube does."""
        verb = info.verb
        if verb in ("list", "watch"):
            work = self._list(info, args, _bounded(level_max, MAX_LIST_SEATS))
        elif verb in ("create", "update", "patch", "delete"):
            work = self._mutating(info, _bounded(level_max, MAX_MUTATING_SEATS), labels)
        else:
            work = ONE_SEAT
        WORK_SEATS.observe(work.seats, *labels)
        return work

    def _list(self, info: RequestInfo, args: Args, max_seats: int) -> WorkEstimate:
        options = _list_options(args)
        if options is None:
            return WorkEstimate(max_seats)  # kube: options it cannot convert take the most
        limit, version, match, continued, initial_events = options
        if info.verb == "watch" and not initial_events and version not in ("", "0"):
            return ONE_SEAT  # a watch from a revision lists nothing first
        stats = self.stats.get(info.api_group, info.resource)
        if stats is None:
            return ONE_SEAT  # not counted (kube: not found)
        from_cache = info.verb == "watch" or not _from_storage(limit, version, match, continued)
        size = stats.average_size
        if size <= 0 and stats.count:
            size = MAX_OBJECT_SIZE
        limited = min(limit, stats.count) if limit > 0 else stats.count
        if info.name:
            loaded = 1
        elif from_cache:
            loaded = limited
        elif info.field_selector or info.label_selector:
            loaded = max(limited, stats.count // 2)
        else:
            loaded = limited
        memory = loaded * size
        if from_cache:
            memory = min(memory, CACHE_STREAMING_MEMORY)
        seats = math.ceil(memory / BYTES_PER_SEAT)
        return WorkEstimate(min(max(seats, MIN_SEATS), max_seats))

    def _mutating(self, info: RequestInfo, max_seats: int, labels: tuple[str, str]) -> WorkEstimate:
        if info.resource == "serviceaccounts" and info.subresource == "token":
            return ONE_SEAT  # no watch hears of a token
        watches = self.watches.interested(info)
        WATCH_COUNT.observe(watches, *labels)
        if watches < WATCHES_PER_SEAT:
            return ONE_SEAT
        final = math.ceil(watches / WATCHES_PER_SEAT)
        work = final * EVENT_ADDITIONAL_LATENCY  # seat-seconds, spread over the seats kept
        final = min(final, max_seats)
        return WorkEstimate(MIN_SEATS, final, work / final)


def _bounded(level_max: int, limit: int) -> int:
    return limit if level_max <= 0 or level_max > limit else level_max


def _list_options(args: Args) -> tuple[int, str, str, bool, bool] | None:
    """(limit, resourceVersion, resourceVersionMatch, continued, sendInitialEvents) as
    kube converts them; None where it cannot (a limit that is not a number)."""

    def text(name: bytes) -> str:
        values = args.get(name)
        return values[0].decode("utf-8", "replace") if values else ""

    raw_limit = text(b"limit")
    try:
        limit = int(raw_limit) if raw_limit else 0
    except ValueError:
        return None
    initial = text(b"sendInitialEvents").lower() in ("true", "1", "t")
    return (
        limit,
        text(b"resourceVersion"),
        text(b"resourceVersionMatch"),
        bool(text(b"continue")),
        initial,
    )


def _from_storage(limit: int, version: str, match: str, continued: bool) -> bool:
    """Whether kube's watch cache hands the list to etcd (delegator.ShouldDelegateList,
    consistent reads served by the cache)."""
    if match == "Exact":
        return True
    if match == "NotOlderThan":
        return False
    if match:
        return True
    if continued:
        return True
    return limit > 0 and version not in ("", "0")
