"""Job and CronJob updates and Job status writes refused as kube-apiserver v1.36 refused
each (reference: the same stored object, then a dry-run PUT of the change); "" where kube
accepted.  The reference's uid is replaced by UID in its messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.gointernal import go_text, same
from platform_api.registry.jobstatusvalidation import indexes_error, overlap_error
from platform_api.registry.strategy import StatusStrategy, Strategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

Obj = dict[str, Any]
# kube's longer answers (a pod template printed whole), by case name
KUBE: dict[str, str] = json.loads(
    (Path(__file__).parent / "fixtures" / "job_update_kube.json").read_text()
)
UID = "6b5c0d3e-1f2a-4b3c-8d4e-5f6a7b8c9d0e"
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:10:00Z", "2024-01-01T00:20:00Z"
CONTAINER = {"name": "c", "image": "busybox"}
INDEXED = {"completionMode": "Indexed", "completions": 3, "parallelism": 3}
PER_INDEX = {**INDEXED, "backoffLimitPerIndex": 1}


def cond(type_: str, status: str = "True") -> Obj:
    return {
        "type": type_,
        "status": status,
        "lastProbeTime": T0,
        "lastTransitionTime": T0,
        "reason": "R",
        "message": "m",
    }


def new_job(spec: Obj) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [dict(CONTAINER)]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "job"},
        "spec": {"template": {"spec": pod}, **copy.deepcopy(spec)},
    }


def merge(target: Any, patch: Any) -> Any:
    """An RFC 7386 merge patch: objects merge, None removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


def pod_patch(**pod: Any) -> Obj:
    return {"spec": {"template": {"spec": pod}}}


def container_patch(**fields: Any) -> Obj:
    return pod_patch(containers=[{**CONTAINER, **fields}])


# (name, the stored Job's spec, its status, a merge patch of the object, kube's message)
SPEC_CASES: list[tuple[str, Obj, Obj, Obj, str]] = [
    (
        "mutable-fields",
        {},
        {},
        {
            "spec": {
                "parallelism": 5,
                "backoffLimit": 2,
                "activeDeadlineSeconds": 10,
                "ttlSecondsAfterFinished": 5,
                "suspend": True,
            }
        },
        "",
    ),
    ("image", {}, {}, container_patch(image="nginx"), KUBE["image"]),
    (
        "template-label",
        {},
        {},
        {"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}},
        KUBE["template-label"],
    ),
    ("selector", {}, {}, {"spec": {"selector": {"matchLabels": {"x": "y"}}}}, KUBE["selector"]),
    (
        "completion-mode",
        {},
        {},
        {"spec": {"completionMode": "Indexed", "completions": 1}},
        'spec.completionMode: Invalid value: "Indexed": field is immutable',
    ),
    (
        "completions-nonindexed",
        {"completions": 2},
        {},
        {"spec": {"completions": 3}},
        "spec.completions: Invalid value: 3: field is immutable",
    ),
    (
        "pod-failure-policy",
        {"podReplacementPolicy": "Failed"},
        {},
        {
            "spec": {
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "Ignore",
                            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                        }
                    ]
                }
            }
        },
        'spec.podFailurePolicy: Invalid value: {"Rules":[{"Action":"Ignore","OnExitCodes":null,"OnPodConditions":[{"Type":"DisruptionTarget","Status":"True"}]}]}: field is immutable',
    ),
    (
        "pod-failure-policy-removed",
        {
            "podFailurePolicy": {
                "rules": [
                    {
                        "action": "FailJob",
                        "onExitCodes": {"containerName": "c", "operator": "In", "values": [1, 2]},
                    }
                ]
            }
        },
        {},
        {"spec": {"podFailurePolicy": None, "podReplacementPolicy": "Failed"}},
        "spec.podFailurePolicy: Invalid value: null: field is immutable",
    ),
    (
        "managed-by",
        {},
        {},
        {"spec": {"managedBy": "example.com/foo"}},
        'spec.managedBy: Invalid value: "example.com/foo": field is immutable',
    ),
    (
        "indexed-completions-alone",
        PER_INDEX,
        {},
        {"spec": {"completions": 4}},
        "spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism",
    ),
    (
        "indexed-completions-tandem",
        PER_INDEX,
        {},
        {"spec": {"completions": 4, "parallelism": 4}},
        "",
    ),
    ("indexed-completions-down", INDEXED, {}, {"spec": {"completions": 1, "parallelism": 1}}, ""),
    (
        "indexed-completions-unset",
        INDEXED,
        {},
        {"spec": {"completions": None}},
        "spec.completions: Required value: when completion mode is Indexed",
    ),
    (
        "backoff-limit-per-index",
        PER_INDEX,
        {},
        {"spec": {"backoffLimitPerIndex": 2}},
        "spec.backoffLimitPerIndex: Invalid value: 2: field is immutable",
    ),
    ("max-failed-indexes", PER_INDEX, {}, {"spec": {"maxFailedIndexes": 2}}, ""),
    (
        "success-policy",
        INDEXED,
        {},
        {"spec": {"successPolicy": {"rules": [{"succeededCount": 1}]}}},
        'spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":null,"SucceededCount":1}]}: field is immutable',
    ),
    (
        "several",
        INDEXED,
        {},
        {
            "spec": {
                "completionMode": "NonIndexed",
                "managedBy": "example.com/x",
                "selector": {"matchLabels": {"x": "y"}},
            }
        },
        KUBE["several"],
    ),
    (
        "suspended-resources",
        {"suspend": True},
        {},
        container_patch(resources={"requests": {"cpu": "100m"}}),
        "",
    ),
    (
        "suspended-scheduling",
        {"suspend": True},
        {},
        merge(
            pod_patch(
                nodeSelector={"a": "b"},
                tolerations=[{"key": "k", "operator": "Exists"}],
                schedulingGates=[{"name": "g"}],
            ),
            {"spec": {"template": {"metadata": {"annotations": {"x": "y"}, "labels": {"a": "b"}}}}},
        ),
        "",
    ),
    (
        "suspended-node-affinity",
        {"suspend": True},
        {},
        pod_patch(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}
                        ]
                    }
                }
            }
        ),
        "",
    ),
    (
        "suspended-pod-affinity",
        {"suspend": True},
        {},
        pod_patch(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "k", "labelSelector": {"matchLabels": {"a": "b"}}}
                    ]
                }
            }
        ),
        KUBE["suspended-pod-affinity"],
    ),
    (
        "suspended-image",
        {"suspend": True},
        {},
        container_patch(image="nginx", resources={"requests": {"cpu": "100m"}}),
        KUBE["suspended-image"],
    ),
    (
        "suspended-started",
        {"suspend": True},
        {"startTime": T0},
        pod_patch(nodeSelector={"a": "b"}),
        KUBE["suspended-started"],
    ),
    (
        "suspended-started-marked",
        {"suspend": True},
        {"startTime": T0, "conditions": [cond("Suspended")]},
        container_patch(resources={"limits": {"memory": "1Gi"}}),
        "",
    ),
    (
        "suspended-active",
        {"suspend": True},
        {"startTime": T0, "active": 1, "conditions": [cond("Suspended")]},
        container_patch(resources={"limits": {"memory": "1Gi"}}),
        KUBE["suspended-active"],
    ),
    (
        "resumed-then-changed",
        {"suspend": True},
        {},
        merge({"spec": {"suspend": False}}, container_patch(resources={"requests": {"cpu": "1"}})),
        "",
    ),
    ("labels", {}, {}, {"metadata": {"labels": {"a": "b"}}}, ""),
]

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


def _strategy(kind: str) -> Strategy:
    rt = builtin_scheme().by_kind("batch", "v1", kind)
    assert rt is not None
    return strategy_for(rt)


def stored(spec: Obj, status: Obj) -> Obj:
    """A Job as a create stores it, then ``status`` written."""
    job = new_job(spec)
    apply_defaults("batch", "Job", job)
    job["metadata"].update(namespace="ns", uid=UID, resourceVersion="1")
    _strategy("Job").prepare_for_create(job)
    if status:
        job["status"] = copy.deepcopy(status)
    return job


def update_message(old: Obj, new: Obj) -> str:
    strategy = _strategy("Job")
    apply_defaults("batch", "Job", new)
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""


def status_message(old: Obj, new: Obj) -> str:
    strategy = StatusStrategy(_strategy("Job"))
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""


@pytest.mark.parametrize(
    ("name", "spec", "status", "patch", "message"), SPEC_CASES, ids=[c[0] for c in SPEC_CASES]
)
def test_spec_updates_as_kube(name: str, spec: Obj, status: Obj, patch: Obj, message: str) -> None:
    old = stored(spec, status)
    assert update_message(old, merge(old, patch)) == message


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


def test_an_indexed_jobs_last_hostname_is_a_dns_label() -> None:
    job = new_job({"completionMode": "Indexed", "completions": 3, "parallelism": 3})
    job["metadata"]["name"] = "a.b"
    apply_defaults("batch", "Job", job)
    job["metadata"].update(namespace="ns", uid=UID)
    strategy = _strategy("Job")
    strategy.prepare_for_create(job)
    assert aggregate(strategy.validate(job)) == (
        'metadata.name: Invalid value: "a.b": will not able to create pod with invalid DNS '
        "label: a.b-2"
    )


def new_cronjob(name: str = "cj", **job_spec: Any) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [dict(CONTAINER)]}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "ns", "uid": UID, "resourceVersion": "1"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": pod}, **job_spec}},
        },
    }


def cronjob_create_message(cronjob: Obj) -> str:
    apply_defaults("batch", "CronJob", cronjob)
    errs = _strategy("CronJob").validate(cronjob)
    return aggregate(errs) if errs else ""


def cronjob_update_message(old: Obj, patch: Obj) -> str:
    strategy = _strategy("CronJob")
    apply_defaults("batch", "CronJob", old)
    new = merge(old, patch)
    apply_defaults("batch", "CronJob", new)
    strategy.prepare_for_update(new, old)
    errs = strategy.validate_update(new, old)
    return aggregate(errs) if errs else ""


SELECTOR_REFUSED = (
    '[spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` '
    "will be auto-generated, spec.jobTemplate.spec.manualSelector: Unsupported value: true: "
    'supported values: "nil", "false"]'
)
SELECTOR = {"selector": {"matchLabels": {"a": "b"}}, "manualSelector": True}


def test_cronjob_creates_as_kube() -> None:
    assert cronjob_create_message(new_cronjob("x" * 53)) == (
        f'metadata.name: Invalid value: "{"x" * 53}": must be no more than 52 characters'
    )
    assert cronjob_create_message(new_cronjob("x" * 52)) == ""
    assert cronjob_create_message(new_cronjob(**SELECTOR)) == SELECTOR_REFUSED
    empty = new_cronjob(selector={}, manualSelector=False)
    assert cronjob_create_message(empty) == (
        "spec.jobTemplate.spec.selector: Invalid value: {}: `selector` will be auto-generated"
    )
    # the template's selector rules sit between its spec rules and the history limits
    several = new_cronjob(
        selector={"matchExpressions": [{"key": "a", "operator": "Exists"}]},
        manualSelector=True,
        parallelism=-1,
    )
    several["spec"].update(successfulJobsHistoryLimit=-1, failedJobsHistoryLimit=-2)
    assert cronjob_create_message(several) == (
        "[spec.jobTemplate.spec.parallelism: Invalid value: -1: must be greater than or equal "
        'to 0, spec.jobTemplate.spec.selector: Invalid value: {"matchExpressions":[{"key":"a",'
        '"operator":"Exists"}]}: `selector` will be auto-generated, '
        'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", '
        '"false", spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or '
        "equal to 0, spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or "
        "equal to 0]"
    )


def test_cronjob_updates_as_kube() -> None:
    patch = {"spec": {"jobTemplate": {"spec": SELECTOR}}}
    assert cronjob_update_message(new_cronjob(), patch) == SELECTOR_REFUSED
    # a CronJob's job template has no immutable fields
    template = {
        "completionMode": "Indexed",
        "completions": 3,
        "template": {"spec": {"containers": [{**CONTAINER, "image": "nginx"}]}},
    }
    assert (
        cronjob_update_message(new_cronjob(), {"spec": {"jobTemplate": {"spec": template}}}) == ""
    )
    # kube skips the name's length on update, for CronJobs created before the rule
    assert cronjob_update_message(new_cronjob("x" * 60), {"spec": {"suspend": True}}) == ""


def test_cronjob_status_writes_check_only_metadata() -> None:
    old = new_cronjob()
    apply_defaults("batch", "CronJob", old)
    new = copy.deepcopy(old)
    new["status"] = {"active": [{"name": ""}], "lastScheduleTime": T1, "lastSuccessfulTime": T0}
    strategy = StatusStrategy(_strategy("CronJob"))
    strategy.prepare_for_update(new, old)
    assert strategy.validate_update(new, old) == []


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


def test_internal_values_compare_as_semantic_deep_equal() -> None:
    empty, none = {"containers": [{"name": "c", "command": []}]}, {"containers": [{"name": "c"}]}
    assert same("core.PodSpec", empty, none)
    cpu = {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1000m"}}}]}
    one = {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}
    assert same("core.PodSpec", cpu, one)
    assert not same("*metav1.LabelSelector", {}, None)
    assert go_text("*batch.UncountedTerminatedPods", {"failed": ["<x>"]}) == (
        '{"Succeeded":null,"Failed":["\\u003cx\\u003e"]}'
    )
