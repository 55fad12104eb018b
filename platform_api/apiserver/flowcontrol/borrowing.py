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


def allocate(required: int, items: list[tuple[float, float, float]]) -> list[float]:
    """(target, lower, upper) per level -> seats summing to ``required``: the one fair
    proportion p with sum(clamp(target * p, lower, upper)) == required."""
    low = sum(lo for _, lo, _ in items)
    high = sum(hi for _, _, hi in items)
    if required <= low:
        return [lo for _, lo, _ in items]
    if required >= high:
        return [hi for _, _, hi in items]
    targets = [max(t, 0.001) for t, _, _ in items]

    def total(p: float) -> float:
        return sum(min(hi, max(lo, t * p)) for t, (_, lo, hi) in zip(targets, items, strict=True))

    below, above = 0.0, 1.0
    while total(above) < required:
        above *= 2
    for _ in range(100):
        middle = (below + above) / 2
        if total(middle) < required:
            below = middle
        else:
            above = middle
    return [min(hi, max(lo, t * above)) for t, (_, lo, hi) in zip(targets, items, strict=True)]


def current_limits(
    nominal_sum: int,
    levels: dict[str, tuple[Bounds, DemandStats]],
    exempt_sum: int,
) -> dict[str, int]:
    """The limited levels' seats for the next period (kube's three regimes), of what
    the exempt levels leave (``exempt_sum``: each one's recent peak, at least its
    minimum)."""
    remaining = nominal_sum - exempt_sum
    min_sum = sum(b.min_cl for b, _ in levels.values())
    keeps = {
        name: max(b.min_cl, min(b.nominal, s.high_watermark)) for name, (b, s) in levels.items()
    }
    keep_sum = sum(keeps.values())
    if remaining <= min_sum:
        return {name: b.min_cl for name, (b, _) in levels.items()}
    if remaining <= keep_sum:
        share = (remaining - min_sum) / (keep_sum - min_sum)
        return {
            name: b.min_cl + go_round((keeps[name] - b.min_cl) * share)
            for name, (b, _) in levels.items()
        }
    names = list(levels)
    items = [
        (max(keeps[n], levels[n][1].smoothed), float(keeps[n]), float(levels[n][0].max_cl))
        for n in names
    ]
    return {
        n: go_round(seats) for n, seats in zip(names, allocate(nominal_sum, items), strict=True)
    }


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
    """The seats an exempt level's requests hold, integrated over time: kube lends the
    limited levels only the seats an exempt level has not used in the last period (its
    high watermark is held back)."""

    __slots__ = ("_clock", "_demand", "_last", "seats")

    def __init__(self, clock: Callable[[], float]) -> None:
        now = clock()
        self._clock, self._last, self.seats = clock, now, 0
        self._demand = Integrator(now)

    def add(self, seats: int) -> None:
        now = self._clock()
        self._demand.add(self.seats, now - self._last)
        self._last, self.seats = now, self.seats + seats

    def demand(self) -> tuple[float, float, float, float]:
        """Seat demand since the last call: (average, deviation, peak, duration)."""
        self.add(0)
        return self._demand.reset(self._last, self.seats)
