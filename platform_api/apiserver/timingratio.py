"""kube's timing ratio histograms (``apiserver_flowcontrol_*_utilization`` and kin).

Such a histogram follows a value that changes now and then (a level's seats in use
over its limit, say) and records it "at the end of every nanosecond": each bucket
counts the nanoseconds the value spent at or under its bound, ``_count`` is every
nanosecond followed and ``_sum`` the value integrated over them.  A series is a
numerator over a denominator, each set by its owner (component-base's
``TimingHistogram`` and apiserver's ``TimingRatioHistogram``).

Each change costs a clock read and a bucket lookup, on the reactor thread (no locks);
a scrape accounts for the time since the last change first, as kube's ``Write`` does.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from typing import Any

from platform_api.apiserver.metrics import ReactorHistogram

Clock = Callable[[], float]


def ratio(numerator: float, denominator: float) -> float:
    """Go's float division: x/0 is an infinity, 0/0 NaN (no exception)."""
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


class Ratio:
    """One series: its numerator and denominator now, and the nanoseconds so far."""

    __slots__ = ("_bounds", "_since", "_value", "clock", "denominator", "numerator", "row")

    def __init__(self, bounds: list[float], clock: Clock, numerator: float, denominator: float):
        self._bounds, self.clock = bounds, clock
        self.numerator, self.denominator = numerator, denominator
        self._value = ratio(numerator, denominator)
        self._since = clock()
        # nanoseconds per bucket (the last one past every bound), then the integral
        self.row = [0.0] * (len(bounds) + 2)

    def _advance(self, now: float) -> None:
        nanoseconds = int((now - self._since) * 1e9)
        if nanoseconds > 0:
            value, row = self._value, self.row
            index = (
                len(self._bounds) if math.isnan(value) else bisect.bisect_left(self._bounds, value)
            )
            row[index] += nanoseconds
            row[-1] += value * nanoseconds
            self._since = now

    def set(self, numerator: float, now: float | None = None) -> None:
        """A new numerator (``now``: the clock's reading, when the caller has it)."""
        if numerator != self.numerator:
            self._advance(self.clock() if now is None else now)
            self.numerator = numerator
            denominator = self.denominator
            self._value = numerator / denominator if denominator else ratio(numerator, 0)

    def add(self, delta: float) -> None:
        self.set(self.numerator + delta)

    def set_denominator(self, denominator: float) -> None:
        if denominator != self.denominator:
            self._advance(self.clock())
            self.denominator = denominator
            self._value = ratio(self.numerator, denominator)

    def sample(self) -> list[float]:
        """The row as of now."""
        self._advance(self.clock())
        return self.row


class TimingRatios(ReactorHistogram):
    """A family of Ratio series by label values; the help says EXPERIMENTAL as kube's.
    Each series' row is the histogram's row, brought up to date when scraped."""

    def __init__(
        self,
        name: str,
        doc: str,
        labels: Iterable[str],
        buckets: Iterable[float],
        registry: Any,
    ) -> None:
        super().__init__(name, "EXPERIMENTAL: " + doc, labels, buckets, registry)
        self.series: dict[tuple[str, ...], Ratio] = {}
        self.before_collect = self._bring_up_to_date
        # ``DELETE /metrics``: the series are forgotten, as kube's vector's are; their
        # owners keep updating theirs unseen (kube's ratioed gauges do the same).
        self.on_clear = self.series.clear

    def child(
        self, *values: str, clock: Clock, numerator: float = 0.0, denominator: float = 1.0
    ) -> Ratio:
        """The series for ``values``, made on first use (kube's NewForLabelValuesSafe),
        or anew for another clock (a test's)."""
        series = self.series.get(values)
        if series is None or series.clock != clock:
            series = self.series[values] = Ratio(self.bounds, clock, numerator, denominator)
            self.values[values] = series.row
            self.values = dict(sorted(self.values.items()))  # Go writes them sorted
        return series

    def _bring_up_to_date(self) -> None:
        for series in self.series.values():
            series.sample()
