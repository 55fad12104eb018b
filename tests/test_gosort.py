"""Go's sort.SliceStable: a true ordering sorts as any stable sort does, at every size
(insertion-sorted blocks of 20, then merged); kube's inconsistent comparison as Go's
steps leave it."""

from __future__ import annotations

import random

import pytest

from platform_api.gosort import slice_stable


@pytest.mark.parametrize("size", [0, 1, 2, 19, 20, 21, 40, 41, 63, 100, 257])
def test_a_true_ordering_sorts_stably(size: int) -> None:
    rng = random.Random(size)
    items = [(rng.randrange(8), i) for i in range(size)]  # many ties: stability shows
    got = list(items)
    slice_stable(got, lambda a, b: a[0] < b[0])
    assert got == sorted(items, key=lambda item: item[0])


def test_an_unknown_position_is_less_either_way_round() -> None:
    """strategicpatch's normalizeSliceOrder with the server's order [80, 81]: the port
    it does not know (82) goes last, as kube-apiserver answered."""
    order = [80, 81]

    def less(a: int, b: int) -> bool:
        if a in order and b in order:
            return order.index(a) < order.index(b)
        return True

    items = [82, 80, 81]
    slice_stable(items, less)
    assert items == [80, 81, 82]
