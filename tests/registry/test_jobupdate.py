"""Job and CronJob updates refused as kube-apiserver v1.36 refused each (reference: the
same stored object, then a dry-run PUT of the change); "" where kube accepted.  The
reference's uid is replaced by UID in its messages.  Status writes: test_jobstatus.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.gointernal import go_text, same
from platform_api.registry.strategy import StatusStrategy
from platform_api.validation.field import aggregate
from tests.registry.jobkit import (
    CONTAINER,
    INDEXED,
    KUBE,
    PER_INDEX,
    T0,
    T1,
    UID,
    Obj,
    cond,
    container_patch,
    job_strategy,
    merge,
    new_job,
    pod_patch,
    stored,
    update_message,
)

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


@pytest.mark.parametrize(
    ("name", "spec", "status", "patch", "message"), SPEC_CASES, ids=[c[0] for c in SPEC_CASES]
)
def test_spec_updates_as_kube(name: str, spec: Obj, status: Obj, patch: Obj, message: str) -> None:
    old = stored(spec, status)
    assert update_message(old, merge(old, patch)) == message


def test_an_indexed_jobs_last_hostname_is_a_dns_label() -> None:
    job = new_job({"completionMode": "Indexed", "completions": 3, "parallelism": 3})
    job["metadata"]["name"] = "a.b"
    apply_defaults("batch", "Job", job)
    job["metadata"].update(namespace="ns", uid=UID)
    strategy = job_strategy("Job")
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
    errs = job_strategy("CronJob").validate(cronjob)
    return aggregate(errs) if errs else ""


def cronjob_update_message(old: Obj, patch: Obj) -> str:
    strategy = job_strategy("CronJob")
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
    strategy = StatusStrategy(job_strategy("CronJob"))
    strategy.prepare_for_update(new, old)
    assert strategy.validate_update(new, old) == []


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
