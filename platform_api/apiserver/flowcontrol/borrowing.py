"""Seat borrowing between priority levels (kube's ``updateBorrowing``, every 10 s).

Each limited level may lend ``lendablePercent`` of its nominal seats and borrow up to
``borrowingLimitPercent`` more (unlimited when unset).  Every period each level's seat
demand (seats executing + waiting, integrated over time) gives a high watermark and an
envelope (average + standard deviation), smoothed over periods (coefficient 0.977).
The seats are then shared out as kube's ``computeConcurrencyAllocation`` does: one fair
proportion of every level's smoothed demand, each level clamped between what it keeps
(its unlendable seats, or its demand up to its nominal seats) and what it may reach.
Exempt levels' demand is not tracked (kube reserves their high watermark first).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from platform_api.apiserver.flowcontrol.metrics import LevelTimings

SMOOTHING = 0.977
PERIOD = 10.0


@dataclass
class Bounds:
    """A limited level's configured seats: nominal, the least it keeps, the most it reaches."""

    nominal: int
    lendable: int
    borrowing: int

    @property
    def min_cl(self) -> int:
        return self.nominal - self.lendable

    @property
    def max_cl(self) -> int:
        return self.nominal + self.borrowing

    @property
    def initial(self) -> int:
        """kube's starting limit for a new level: its nominal seats less half it may lend."""
        return self.nominal - self.lendable // 2


def go_round(value: float) -> int:
    """Go's math.Round: halves away from zero (Python's round goes to even)."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def bounds(
    nominal: int, lendable_percent: int, borrowing_percent: int | None, server: int
) -> Bounds:
    lendable = go_round(nominal * lendable_percent / 100)
    borrowing = server if borrowing_percent is None else go_round(nominal * borrowing_percent / 100)
    return Bounds(nominal, lendable, borrowing)


@dataclass
class DemandStats:
    """A level's seat demand over the periods so far."""

    high_watermark: int = 0
    smoothed: float = 0.0
    average: float = 0.0  # of the last period, as kube's demand_seats_average reports it
    deviation: float = 0.0

    def update(self, average: float, deviation: float, peak: float, duration: float) -> None:
        self.high_watermark = go_round(peak)
        if duration <= 0:
            return
        self.average, self.deviation = average, deviation
        envelope = average + deviation
        self.smoothed = max(envelope, SMOOTHING * self.smoothed + (1 - SMOOTHING) * envelope)


MIN_TARGET = 0.001  # kube's floor under a level's target


def allocate(required: int, items: list[tuple[float, float, float]]) -> tuple[list[float], float]:
    """(target, lower, upper) per level -> (seats summing to ``required``, the fair
    proportion): the one p with sum(clamp(target * p, lower, upper)) == required, as
    kube's computeConcurrencyAllocation (which reports p as ``seat_fair_frac``)."""
    targets = [max(t, MIN_TARGET) for t, _, _ in items]
    # each level's bounds as proportions of its target
    relative = [(lo / t, hi / t) for t, (_, lo, hi) in zip(targets, items, strict=True)]
    if required <= 0:
        return [0.0] * len(items), 0.0
    if required <= sum(lo for _, lo, _ in items):  # constrained from below
        return [lo for _, lo, _ in items], min(lo for lo, _ in relative)
    if required >= sum(hi for _, _, hi in items):  # constrained from above
        return [hi for _, _, hi in items], max(hi for _, hi in relative)

    def clamped(p: float) -> list[float]:
        return [min(hi, max(lo, t * p)) for t, (_, lo, hi) in zip(targets, items, strict=True)]

    fair = required / sum(targets)
    if max(lo for lo, _ in relative) <= fair <= min(hi for _, hi in relative):
        return [t * fair for t in targets], fair  # no bound matters
    below, above = 0.0, 1.0
    while sum(clamped(above)) < required:
        above *= 2
    for _ in range(100):
        middle = (below + above) / 2
        if sum(clamped(middle)) < required:
            below = middle
        else:
            above = middle
    return clamped(above), above


@dataclass
class Shares:
    """One period's outcome: each limited level's seats and target (kube's
    ``target_seats``), and the fair proportion (``seat_fair_frac``; 0 when the seats
    did not go round the targets)."""

    limits: dict[str, int]
    targets: dict[str, float]
    fair_frac: float


def current_limits(
    nominal_sum: int,
    levels: dict[str, tuple[Bounds, DemandStats]],
    exempt_sum: int,
) -> Shares:
    """The limited levels' seats for the next period (kube's three regimes), of what
    the exempt levels leave (``exempt_sum``: each one's recent peak, at least its
    minimum)."""
    remaining = nominal_sum - exempt_sum
    min_sum = sum(b.min_cl for b, _ in levels.values())
    keeps = {
        name: max(b.min_cl, min(b.nominal, s.high_watermark)) for name, (b, s) in levels.items()
    }
    targets = {name: max(keeps[name], s.smoothed) for name, (_, s) in levels.items()}
    keep_sum = sum(keeps.values())
    if remaining <= min_sum:
        return Shares({name: b.min_cl for name, (b, _) in levels.items()}, targets, 0.0)
    if remaining <= keep_sum:
        share = (remaining - min_sum) / (keep_sum - min_sum)
        limits = {
            name: b.min_cl + go_round((keeps[name] - b.min_cl) * share)
            for name, (b, _) in levels.items()
        }
        return Shares(limits, targets, 0.0)
    names = list(levels)
    items = [(targets[n], float(keeps[n]), float(levels[n][0].max_cl)) for n in names]
    seats, fair = allocate(nominal_sum, items)
    limits = {n: go_round(amount) for n, amount in zip(names, seats, strict=True)}
    return Shares(limits, targets, fair)


class Integrator:
    """Time-weighted average, deviation and peak of a level's seat demand."""

    __slots__ = ("_peak", "_start", "_sum", "_sum2")

    def __init__(self, now: float) -> None:
        self._start, self._sum, self._sum2, self._peak = now, 0.0, 0.0, 0.0

    def add(self, demand: int, elapsed: float) -> None:
        self._sum += demand * elapsed
        self._sum2 += demand * demand * elapsed
        self._peak = max(self._peak, demand)

    def reset(self, now: float, demand: int) -> tuple[float, float, float, float]:
        """(average, deviation, peak, duration) since the last reset; starts anew."""
        duration = now - self._start
        peak = max(self._peak, demand)
        if duration > 0:
            average = self._sum / duration
            deviation = math.sqrt(max(0.0, self._sum2 / duration - average * average))
        else:
            average = deviation = 0.0
        self._start, self._sum, self._sum2, self._peak = now, 0.0, 0.0, float(demand)
        return average, deviation, peak, duration


class SeatUse:
    """The seats (and requests) an exempt level's requests hold, integrated over time:
    kube lends the limited levels only the seats an exempt level has not used in the
    last period (its high watermark is held back)."""

    __slots__ = ("_clock", "_demand", "_last", "requests", "seats", "timings")

    def __init__(self, clock: Callable[[], float]) -> None:
        now = clock()
        self._clock, self._last, self.seats, self.requests = clock, now, 0, 0
        self._demand = Integrator(now)
        self.timings: LevelTimings | None = None

    def add(self, seats: int, requests: int = 0) -> None:
        now = self._clock()
        self._demand.add(self.seats, now - self._last)
        self._last, self.seats = now, self.seats + seats
        self.requests += requests
        if self.timings is not None:
            self.timings.observe(0, self.requests, self.seats, 0)

    def demand(self) -> tuple[float, float, float, float]:
        """Seat demand since the last call: (average, deviation, peak, duration)."""
        self.add(0)
        return self._demand.reset(self._last, self.seats)
