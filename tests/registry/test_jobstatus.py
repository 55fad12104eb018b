"""Job status writes refused as kube-apiserver v1.36 refused each (reference: the same
stored Job, then a dry-run PUT of its status); "" where kube accepted.  Then the index
lists of platform_api/registry/jobstatusvalidation.py."""

from __future__ import annotations

import copy

import pytest

from platform_api.registry.jobstatusvalidation import indexes_error, overlap_error
from tests.registry.jobkit import (
    INDEXED,
    KUBE,
    PER_INDEX,
    T0,
    T1,
    T2,
    Obj,
    cond,
    status_message,
    stored,
)

# (name, the stored Job's spec, its status, the written status, kube's message)
STATUS_CASES: list[tuple[str, Obj, Obj, Obj, str]] = [
    (
        "negatives",
        {},
        {},
        {"active": -1, "succeeded": -2, "failed": -3, "ready": -1, "terminating": -1},
        KUBE["negatives"],
    ),
    (
        "uncounted",
        {},
        {},
        {"uncountedTerminatedPods": {"succeeded": ["", "a", "a"], "failed": ["a", ""]}},
        '[status.uncountedTerminatedPods.succeeded[0]: Invalid value: "": must not be empty, status.uncountedTerminatedPods.succeeded[2]: Duplicate value: "a", status.uncountedTerminatedPods.failed[0]: Duplicate value: "a", status.uncountedTerminatedPods.failed[1]: Invalid value: "": must not be empty]',
    ),
    (
        "complete-alone",
        {},
        {},
        {"conditions": [cond("Complete")]},
        "[status.completionTime: Required value: completionTime is required for Complete jobs, status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.startTime: Required value: startTime is required for finished job]",
    ),
    (
        "complete",
        {},
        {},
        {
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
            "startTime": T0,
            "completionTime": T1,
            "succeeded": 1,
        },
        "",
    ),
    (
        "failed-alone",
        {},
        {},
        {"conditions": [cond("Failed")]},
        "[status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition, status.startTime: Required value: startTime is required for finished job]",
    ),
    (
        "failed",
        {},
        {},
        {"conditions": [cond("FailureTarget"), cond("Failed")], "startTime": T0, "failed": 1},
        "",
    ),
    (
        "finished-with-pods",
        {},
        {},
        {
            "conditions": [cond("FailureTarget"), cond("Failed")],
            "startTime": T0,
            "active": 2,
            "terminating": 1,
            "uncountedTerminatedPods": {"failed": ["x"]},
        },
        '[status.active: Invalid value: 2: active>0 is invalid for finished job, status.uncountedTerminatedPods: Invalid value: {"Succeeded":null,"Failed":["x"]}: must be empty for finished job, status.terminating: Invalid value: 1: terminating>0 is invalid for finished job]',
    ),
    (
        "everything",
        {},
        {},
        {
            "conditions": [
                cond("Complete"),
                cond("Failed"),
                cond("FailureTarget"),
                cond("SuccessCriteriaMet"),
            ],
            "startTime": T0,
            "completionTime": T1,
        },
        "[status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions, status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions, status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions, status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions]",
    ),
    (
        "completion-before-start",
        {},
        {},
        {
            "startTime": T1,
            "completionTime": T0,
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
        },
        'status.completionTime: Invalid value: "2024-01-01T00:00:00Z": must be equal to or after `startTime`',
    ),
    (
        "completion-time-alone",
        {},
        {},
        {"completionTime": T0},
        'status.completionTime: Invalid value: "2024-01-01T00:00:00Z": cannot set completionTime when there is no Complete=True condition',
    ),
    (
        "ready-over-active",
        {},
        {},
        {"ready": 2, "active": 1},
        "status.ready: Invalid value: 2: cannot set more ready pods than active",
    ),
    ("criteria-nonindexed", {}, {}, {"conditions": [cond("SuccessCriteriaMet")]}, ""),
    (
        "completed-indexes-nonindexed",
        {},
        {},
        {"completedIndexes": "1-3"},
        '[status.completedIndexes: Invalid value: "1-3": error parsing completedIndexes: too large index: "1", status.completedIndexes: Invalid value: "1-3": cannot set non-empty completedIndexes when non-indexed completion mode]',
    ),
    (
        "failed-indexes-no-per-index",
        INDEXED,
        {},
        {"failedIndexes": "1"},
        'status.failedIndexes: Invalid value: "1": cannot set non-null failedIndexes when backoffLimitPerIndex is null',
    ),
    (
        "completed-indexes-format",
        INDEXED,
        {},
        {"completedIndexes": "0,2,1"},
        'status.completedIndexes: Invalid value: "0,2,1": error parsing completedIndexes: non-increasing order, previous: 2, current: 1',
    ),
    (
        "completed-indexes-range",
        INDEXED,
        {},
        {"completedIndexes": "1-2-3"},
        'status.completedIndexes: Invalid value: "1-2-3": error parsing completedIndexes: the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by \'-\'',
    ),
    (
        "completed-indexes-large",
        INDEXED,
        {},
        {"completedIndexes": "0-5"},
        'status.completedIndexes: Invalid value: "0-5": error parsing completedIndexes: too large index: "5"',
    ),
    (
        "completed-indexes-word",
        INDEXED,
        {},
        {"completedIndexes": "0,x"},
        'status.completedIndexes: Invalid value: "0,x": error parsing completedIndexes: cannot convert string to integer for index: "x"',
    ),
    ("completed-indexes-ok", INDEXED, {}, {"completedIndexes": "0-2", "succeeded": 3}, ""),
    (
        "failed-indexes-format",
        PER_INDEX,
        {},
        {"failedIndexes": "2-1"},
        'status.failedIndexes: Invalid value: "2-1": error parsing failedIndexes: non-increasing order, previous: 2, current: 1',
    ),
    (
        "indexes-overlap",
        PER_INDEX,
        {},
        {"completedIndexes": "0-1", "failedIndexes": "1-2"},
        'status.failedIndexes: Invalid value: "1-2": failedIndexes and completedIndexes overlap at index: 1',
    ),
    ("indexes-apart", PER_INDEX, {}, {"completedIndexes": "0", "failedIndexes": "1-2"}, ""),
    ("failed-indexes-empty", PER_INDEX, {}, {"failedIndexes": ""}, ""),
    (
        "counters-decrease",
        {},
        {"succeeded": 2, "failed": 2},
        {"succeeded": 1, "failed": 1},
        "[status.failed: Invalid value: 1: cannot decrease the failed counter, status.succeeded: Invalid value: 1: cannot decrease the succeeded counter]",
    ),
    (
        "succeeded-decrease-elastic",
        INDEXED,
        {"succeeded": 2, "completedIndexes": "0-1"},
        {"succeeded": 1, "completedIndexes": "0"},
        "",
    ),
    (
        "terminal-undone",
        {},
        {"conditions": [cond("FailureTarget"), cond("Failed")], "startTime": T0},
        {"conditions": [cond("FailureTarget", "False")], "startTime": T0},
        "[status.conditions: Invalid value: cannot disable the terminal Failed=True condition, status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition]",
    ),
    (
        "complete-undone",
        {},
        {
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
            "startTime": T0,
            "completionTime": T1,
        },
        {"startTime": T0},
        "[status.conditions: Invalid value: cannot disable the terminal Complete=True condition, status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition]",
    ),
    (
        "completion-time-moved",
        {},
        {
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
            "startTime": T0,
            "completionTime": T1,
        },
        {
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
            "startTime": T0,
            "completionTime": T2,
        },
        'status.completionTime: Invalid value: "2024-01-01T00:20:00Z": field is immutable',
    ),
    (
        "start-time-moved",
        {},
        {"startTime": T0},
        {"startTime": T1},
        'status.startTime: Invalid value: "2024-01-01T00:10:00Z": field is immutable for unsuspended job once set',
    ),
    (
        "start-time-cleared",
        {},
        {"startTime": T0},
        {},
        "status.startTime: Invalid value: null: field is immutable for unsuspended job once set",
    ),
    ("start-time-suspended", {"suspend": True}, {"startTime": T0}, {"startTime": T1}, ""),
    (
        "start-time-resuming",
        {},
        {"startTime": T0, "conditions": [cond("Suspended")]},
        {"startTime": T1, "conditions": [cond("Suspended", "False")]},
        "",
    ),
    (
        "criteria-after-complete",
        INDEXED,
        {
            "conditions": [cond("SuccessCriteriaMet"), cond("Complete")],
            "startTime": T0,
            "completionTime": T1,
        },
        {"conditions": [cond("Complete")], "startTime": T0, "completionTime": T1},
        "[status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition]",
    ),
    (
        "success-policy-complete",
        {**INDEXED, "successPolicy": {"rules": [{"succeededCount": 1}]}},
        {},
        {"conditions": [cond("Complete")], "startTime": T0, "completionTime": T1},
        "[status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.conditions: Invalid value: cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True]",
    ),
    (
        "finished-failed-counter",
        {},
        {"conditions": [cond("FailureTarget"), cond("Failed")], "startTime": T0},
        {"conditions": [cond("FailureTarget"), cond("Failed")], "startTime": T0, "failed": 1},
        "",
    ),
    (
        "suspended-zero-completions",
        {"suspend": True, "completions": 0},
        {},
        {"conditions": [cond("SuccessCriteriaMet"), cond("Complete")], "completionTime": T1},
        "",
    ),
]


@pytest.mark.parametrize(
    ("name", "spec", "status", "written", "message"),
    STATUS_CASES,
    ids=[c[0] for c in STATUS_CASES],
)
def test_status_writes_as_kube(
    name: str, spec: Obj, status: Obj, written: Obj, message: str
) -> None:
    old = stored(spec, status)
    new = copy.deepcopy(old)
    new["status"] = copy.deepcopy(written)
    assert status_message(old, new) == message


@pytest.mark.parametrize(
    ("text", "completions", "error"),
    [
        ("", 0, ""),
        ("0,2-4,7", 8, ""),
        ("+1", 3, ""),  # strconv.Atoi takes a sign
        ("1,,2", 3, 'cannot convert string to integer for index: ""'),
        ("-1", 3, 'cannot convert string to integer for index: ""'),
        (
            "99999999999999999999",
            3,
            'cannot convert string to integer for index: "99999999999999999999"',
        ),
        ("٣", 5, 'cannot convert string to integer for index: "٣"'),
        ("2-2", 3, "non-increasing order, previous: 2, current: 2"),
        ("0-1,1", 3, "non-increasing order, previous: 1, current: 1"),
        ("3", 3, 'too large index: "3"'),
    ],
)
def test_index_lists_parse_as_kubes(text: str, completions: int, error: str) -> None:
    assert indexes_error(text, completions) == error


def test_overlaps_skip_what_does_not_parse() -> None:
    assert overlap_error("0-2,x,7", "x,5-6,7", 10) == (
        "failedIndexes and completedIndexes overlap at index: 7"
    )
    assert overlap_error("0-2,4", "3,5-9", 10) == ""
