"""kube's BeforeDelete and the pod strategy's CheckGracefulDelete, as pure rules.

The expected stamps are the reference kube-apiserver v1.36's answers to the same
deletes (tests/e2e/test_graceful_deletion.py runs them against the server)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.core import PodStrategy
from platform_api.registry.deletion import (
    GRACEFUL,
    IMMEDIATE,
    PENDING,
    before_delete,
    go_seconds,
    requested_grace,
)
from platform_api.scheme.types import ResourceType
from platform_api.timestamps import parse_timestamp

NOW = parse_timestamp("2026-12-01T11:18:01Z") or 0.0
POD = ResourceType("", "v1", "Pod", "pods", "pod", namespaced=True)


def pod(**meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "generation": 1, **meta}, "spec": {}, "status": {}}


def test_kinds_without_graceful_deletion_are_left_alone() -> None:
    obj = pod()
    assert before_delete(obj, None, 30, NOW) == IMMEDIATE
    assert obj == pod()


def test_a_first_delete_stamps_the_period_and_moves_the_generation_on() -> None:
    obj = pod()
    assert before_delete(obj, 30, None, NOW) == GRACEFUL
    assert obj["metadata"] == {
        "name": "p",
        "generation": 2,
        "deletionTimestamp": "2026-12-01T11:18:31Z",
        "deletionGracePeriodSeconds": 30,
    }
    zero = pod(generation=0)
    assert before_delete(zero, 0, None, NOW) == GRACEFUL
    assert zero["metadata"]["generation"] == 0  # only a generation in use moves
    assert zero["metadata"]["deletionTimestamp"] == "2026-12-01T11:18:01Z"


@pytest.mark.parametrize(
    ("requested", "step", "stamp", "period"),
    [
        (None, PENDING, "2026-12-01T11:18:31Z", 30),  # nothing asked: it waits
        (60, PENDING, "2026-12-01T11:18:31Z", 30),  # only a shorter period is taken
        (30, PENDING, "2026-12-01T11:18:31Z", 30),
        (10, GRACEFUL, "2026-12-01T11:18:11Z", 10),  # moved back by the difference
        (0, GRACEFUL, "2026-12-01T11:18:01Z", 0),
    ],
)
def test_a_deletion_under_way_may_only_be_shortened(
    requested: int | None, step: str, stamp: str, period: int
) -> None:
    obj = pod(generation=2, deletionTimestamp="2026-12-01T11:18:31Z", deletionGracePeriodSeconds=30)
    assert before_delete(obj, 30, requested, NOW + 5) == step
    meta = obj["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (stamp, period)
    assert meta["generation"] == 2  # once per deletion


def test_a_deletion_at_zero_is_finished_not_pending() -> None:
    for meta in ({"deletionGracePeriodSeconds": 0}, {}):
        obj = pod(deletionTimestamp="2026-12-01T11:18:01Z", **meta)
        assert before_delete(obj, 30, 5, NOW) == IMMEDIATE


def test_periods_wrap_as_go_durations_do() -> None:
    """kube multiplies the period into int64 nanoseconds: past ~292 years it wraps."""
    assert go_seconds(30) == 30.0
    assert go_seconds(2**63 - 1) == -1.0
    obj = pod()
    before_delete(obj, 100_000_000_000, None, parse_timestamp("2026-12-01T11:29:03Z") or 0.0)
    assert obj["metadata"]["deletionTimestamp"] == "2273-01-07T23:22:54Z"
    assert requested_grace(-5) == 1 and requested_grace(-(2**63)) == 1
    assert requested_grace(0) == 0 and requested_grace(None) is None


@pytest.mark.parametrize(
    ("spec", "status", "requested", "period"),
    [
        ({}, {}, 30, 0),  # never scheduled: nothing runs it
        ({"nodeName": "n1"}, {"phase": "Succeeded"}, 30, 0),  # finished
        ({"nodeName": "n1"}, {"phase": "Failed"}, None, 0),
        ({"nodeName": "n1", "terminationGracePeriodSeconds": 45}, {}, None, 45),
        ({"nodeName": "n1", "terminationGracePeriodSeconds": 45}, {}, 5, 5),
        ({"nodeName": "n1"}, {"phase": "Running"}, None, 0),  # no period set: at once
    ],
)
def test_the_pod_strategy_picks_the_period(
    spec: dict[str, Any], status: dict[str, Any], requested: int | None, period: int
) -> None:
    strategy = PodStrategy(POD)
    assert strategy.deletion_grace({"spec": spec, "status": status}, requested) == period
