"""Timing ratio histograms: nanoseconds per bucket of a numerator over a denominator."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry

from platform_api.apiserver.metrics import text
from platform_api.apiserver.timingratio import TimingRatios, ratio

SECOND = 1e9


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _family() -> tuple[TimingRatios, CollectorRegistry]:
    registry = CollectorRegistry()
    family = TimingRatios("t_ratio", "[ALPHA] a ratio", ["level"], (0, 0.5, 1), registry)
    return family, registry


def test_buckets_count_the_nanoseconds_spent_at_or_under_each_bound() -> None:
    family, _ = _family()
    clock = FakeClock()
    series = family.child("a", clock=clock, denominator=4)
    clock.now += 2  # 2 s at 0
    series.set(2)  # 0.5
    clock.now += 1  # 1 s at 0.5
    series.add(4)  # 1.5: over every bound
    clock.now += 0.5
    row = series.sample()
    assert row == [2 * SECOND, 1 * SECOND, 0.0, 0.5 * SECOND, 0.5 * SECOND + 0.75 * SECOND]


def test_a_new_denominator_changes_the_ratio_from_then_on() -> None:
    family, _ = _family()
    clock = FakeClock()
    series = family.child("a", clock=clock, numerator=1, denominator=1)
    clock.now += 1
    series.set_denominator(4)  # 1 s at 1, then at 0.25
    clock.now += 1
    assert series.sample()[:4] == [0.0, SECOND, SECOND, 0.0]


def test_an_unchanged_value_records_nothing_until_read() -> None:
    family, _ = _family()
    clock = FakeClock()
    series = family.child("a", clock=clock)
    clock.now += 3
    series.set(0)  # the same value: no bookkeeping
    assert series.row[0] == 0
    assert series.sample()[0] == 3 * SECOND


def test_division_by_zero_is_gos() -> None:
    assert math.isnan(ratio(0, 0))
    assert ratio(3, 0) == math.inf and ratio(-3, 0) == -math.inf
    family, _ = _family()
    clock = FakeClock()
    series = family.child("a", clock=clock, numerator=1, denominator=0)
    clock.now += 1
    assert series.sample()[3] == SECOND  # +Inf: past every bound


def test_exposition_is_kubes() -> None:
    family, registry = _family()
    clock = FakeClock()
    family.child("a", clock=clock, numerator=1, denominator=2)
    clock.now += 1
    assert text(registry).decode() == (
        "# HELP t_ratio EXPERIMENTAL: [ALPHA] a ratio\n"
        "# TYPE t_ratio histogram\n"
        't_ratio_bucket{level="a",le="0"} 0\n'
        't_ratio_bucket{level="a",le="0.5"} 1e+09\n'
        't_ratio_bucket{level="a",le="1"} 1e+09\n'
        't_ratio_bucket{level="a",le="+Inf"} 1e+09\n'
        't_ratio_sum{level="a"} 5e+08\n'
        't_ratio_count{level="a"} 1e+09\n'
    )


def test_a_reset_forgets_the_series() -> None:
    family, registry = _family()
    clock = FakeClock()
    family.child("a", clock=clock)
    family.clear()
    assert text(registry) == b""
    assert family.child("a", clock=clock).row[0] == 0
