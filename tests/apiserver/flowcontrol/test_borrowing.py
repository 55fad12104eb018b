"""Seat borrowing: kube's fair allocation between lower and upper bounds."""

from __future__ import annotations

import pytest

from platform_api.apiserver.flowcontrol.borrowing import (
    DemandStats,
    Integrator,
    allocate,
    bounds,
    current_limits,
)


def test_bounds_from_percentages() -> None:
    b = bounds(49, 50, None, 600)  # global-default: lends half, borrows without limit
    assert (b.min_cl, b.max_cl, b.initial) == (24, 649, 37)
    b = bounds(13, 0, 0, 600)
    assert (b.min_cl, b.max_cl, b.initial) == (13, 13, 13)


def test_allocation_is_one_fair_proportion_within_bounds() -> None:
    # No bounds bind: seats in proportion to the targets.
    assert allocate(30, [(10, 0, 100), (20, 0, 100)]) == (pytest.approx([10, 20]), 1.0)
    # The first is held at its upper bound; the rest goes to the second.
    assert allocate(30, [(20, 0, 5), (20, 0, 100)])[0] == pytest.approx([5, 25])
    # Lower bounds win when the sum is too small for them.
    assert allocate(3, [(1, 2, 9), (1, 2, 9)]) == ([2, 2], 2.0)


def test_idle_levels_lend_to_a_busy_one() -> None:
    busy, idle = DemandStats(), DemandStats()
    busy.update(average=40.0, deviation=0.0, peak=40, duration=10.0)
    idle.update(average=0.0, deviation=0.0, peak=0, duration=10.0)
    levels = {
        "busy": (bounds(10, 0, None, 40), busy),
        "idle": (bounds(30, 90, None, 40), idle),
    }
    limits = current_limits(40, levels, 0).limits
    assert limits["idle"] == 3  # keeps its unlendable 10%
    assert limits["busy"] == 37


def test_integrator_averages_over_time() -> None:
    integrator = Integrator(0.0)
    integrator.add(4, 5.0)
    integrator.add(0, 5.0)
    average, deviation, peak, duration = integrator.reset(10.0, 0)
    assert (average, deviation, peak, duration) == (2.0, 2.0, 4, 10.0)


def test_an_exempt_peak_shrinks_what_busy_levels_keep() -> None:
    """Both levels want all their nominal seats; an exempt level that used 10 of the 40
    leaves 30: each gets its minimum and half of the rest it wanted (kube's second
    regime); one that used 20 leaves only the minimums (the first)."""
    busy, other = DemandStats(), DemandStats()
    busy.update(average=10.0, deviation=0.0, peak=10, duration=10.0)
    other.update(average=30.0, deviation=0.0, peak=30, duration=10.0)
    levels = {
        "busy": (bounds(10, 50, None, 40), busy),
        "other": (bounds(30, 50, None, 40), other),
    }
    assert current_limits(40, levels, 0).limits == {"busy": 10, "other": 30}
    assert current_limits(40, levels, 10).limits == {"busy": 8, "other": 23}
    assert current_limits(40, levels, 20).limits == {"busy": 5, "other": 15}
