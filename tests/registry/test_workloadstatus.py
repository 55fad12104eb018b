"""Workload status rules, checked against kube-apiserver v1.36's answers to the same
``/status`` merge patches (its messages, in its order)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.workloadstatus import workload_status_errors

NEGATIVE = "must be greater than or equal to 0"
ALL_NEGATIVE = {
    "Deployment": [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ],
    "ReplicaSet": [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
        "terminatingReplicas",
    ],
    "ReplicationController": [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ],
    "StatefulSet": [  # terminatingReplicas is sent too, and kube leaves it unchecked
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "observedGeneration",
        "collisionCount",
    ],
    "DaemonSet": [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "collisionCount",
    ],
}


@pytest.mark.parametrize("kind", sorted(ALL_NEGATIVE))
def test_negative_counts(kind: str) -> None:
    status = dict.fromkeys(ALL_NEGATIVE[kind], -1)
    if kind == "StatefulSet":
        status["terminatingReplicas"] = -1
    expected = [f"status.{name}: Invalid value: -1: {NEGATIVE}" for name in ALL_NEGATIVE[kind]]
    assert [str(e) for e in workload_status_errors(kind, status)] == expected


ABOVE = "cannot be greater than status.replicas"


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        (
            "Deployment",
            {"replicas": 1, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 3},
            [
                f"status.updatedReplicas: Invalid value: 2: {ABOVE}",
                f"status.readyReplicas: Invalid value: 2: {ABOVE}",
                f"status.availableReplicas: Invalid value: 3: {ABOVE}",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ],
        ),
        (
            "ReplicaSet",
            {"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 3},
            [
                f"status.fullyLabeledReplicas: Invalid value: 2: {ABOVE}",
                f"status.readyReplicas: Invalid value: 2: {ABOVE}",
                f"status.availableReplicas: Invalid value: 3: {ABOVE}",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ],
        ),
        (
            "StatefulSet",
            {
                "replicas": 1,
                "readyReplicas": 2,
                "currentReplicas": 2,
                "updatedReplicas": 2,
                "availableReplicas": 3,
            },
            [
                f"status.readyReplicas: Invalid value: 2: {ABOVE}",
                f"status.currentReplicas: Invalid value: 2: {ABOVE}",
                f"status.updatedReplicas: Invalid value: 2: {ABOVE}",
                f"status.availableReplicas: Invalid value: 3: {ABOVE}",
                "status.availableReplicas: Invalid value: 3: cannot be greater than "
                "status.readyReplicas",
            ],
        ),
        (  # a negative whole puts the absent counts (0) above it: the reference's words
            "Deployment",
            {"replicas": -1, "readyReplicas": 5},
            [
                f"status.replicas: Invalid value: -1: {NEGATIVE}",
                f"status.updatedReplicas: Invalid value: 0: {ABOVE}",
                f"status.readyReplicas: Invalid value: 5: {ABOVE}",
                f"status.availableReplicas: Invalid value: 0: {ABOVE}",
            ],
        ),
        (
            "StatefulSet",
            {"replicas": -2},
            [f"status.replicas: Invalid value: -2: {NEGATIVE}"]
            + [
                f"status.{n}: Invalid value: 0: {ABOVE}"
                for n in (
                    "readyReplicas",
                    "currentReplicas",
                    "updatedReplicas",
                    "availableReplicas",
                )
            ],
        ),
        ("DaemonSet", {"numberReady": 5, "desiredNumberScheduled": 1}, []),
        ("Deployment", {}, []),
        ("Pod", {"replicas": -1}, []),
    ],
)
def test_counts_within_the_whole(kind: str, status: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in workload_status_errors(kind, status)] == expected
