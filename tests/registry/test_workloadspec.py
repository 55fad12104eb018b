"""apps/v1 workload specs validated case by case as kube-apiserver v1.36 answered (reference)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.claimspec import validate_claim_spec
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.statefulsetspec import validate_statefulset_spec
from platform_api.registry.workloadspec import (
    validate_cronjob_spec,
    validate_daemonset_spec,
    validate_deployment_spec,
    validate_job_spec,
    validate_replicated_spec,
)

C = [{"name": "c", "image": "i"}]
SELECT = {"matchLabels": {"a": "b"}}


def template(labels: dict[str, str], **pod: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": C, **pod}}


MISMATCH = "`selector` does not match template `labels`"
CASES: list[tuple[dict[str, Any], list[str]]] = [
    (
        {},
        [
            "spec.selector: Required value",
            f"spec.template.metadata.labels: Invalid value: null: {MISMATCH}",
            "spec.template.spec.containers: Required value",
        ],
    ),
    (
        {"selector": SELECT, "template": template({"a": "c"})},
        [f'spec.template.metadata.labels: Invalid value: {{"a":"c"}}: {MISMATCH}'],
    ),
    (
        {"selector": SELECT, "template": template({"a": "b"}), "replicas": -1},
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (  # Go's struct, printed: an empty matchLabels is omitted (the reference's words)
        {"selector": {"matchLabels": {}}, "template": template({"a": "b"})},
        ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
    ),
    (
        {"selector": {}, "template": template({"a": "b"})},
        ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
    ),
    (
        {"selector": SELECT, "template": template({"a": "b"}), "strategy": {"type": "Bogus"}},
        [
            'spec.strategy: Unsupported value: {"Type":"Bogus","RollingUpdate":null}: '
            'supported values: "Recreate", "RollingUpdate"'
        ],
    ),
    (
        {
            "selector": SELECT,
            "template": template({"a": "b"}),
            "revisionHistoryLimit": -1,
            "minReadySeconds": -1,
        },
        [
            "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ],
    ),
    (
        {"selector": SELECT, "template": template({"a": "b"}, restartPolicy="Never")},
        [
            'spec.template.spec.restartPolicy: Unsupported value: "Never": '
            'supported values: "Always"'
        ],
    ),
    (
        {
            "selector": SELECT,
            "template": template({"a": "b"}),
            "progressDeadlineSeconds": 1,
            "minReadySeconds": 5,
        },
        ["spec.progressDeadlineSeconds: Invalid value: 1: must be greater than minReadySeconds"],
    ),
    (
        {
            "selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
            "template": template({"a": "b"}),
        },
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": '
            "not a valid selector operator",
            'spec.selector: Invalid value: {"matchExpressions":[{"key":"a","operator":"Bogus"}]}: '
            "invalid label selector",
        ],
    ),
    (
        {  # printed as Go prints the struct: matchLabels first, a requirement's key first
            "selector": {
                "matchExpressions": [{"values": ["d"], "operator": "", "key": "c"}],
                "matchLabels": {"b": "1", "a": "2"},
            },
            "template": template({"a": "2", "b": "1"}),
        },
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "": '
            "not a valid selector operator",
            'spec.selector: Invalid value: {"matchLabels":{"a":"2","b":"1"},"matchExpressions":'
            '[{"key":"c","operator":"","values":["d"]}]}: invalid label selector',
        ],
    ),
    ({"selector": SELECT, "template": template({"a": "b", "c": "d"})}, []),
]


@pytest.mark.parametrize(("spec", "expected"), CASES)
def test_deployment_spec_errors_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    deployment: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec}
    apply_defaults("apps", "Deployment", deployment)
    assert [str(e) for e in validate_deployment_spec(deployment["spec"])] == expected


def other_cases(kind: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    owner = "deployment" if kind == "ReplicaSet" else kind.lower()
    missing = [] if kind == "DaemonSet" else ["spec.selector: Required value"]
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        (
            kind,
            {},
            [
                *missing,
                f"spec.template.metadata.labels: Invalid value: null: {MISMATCH}",
                "spec.template.spec.containers: Required value",
            ],
        ),
        (
            kind,
            {"selector": {}, "template": template({"a": "b"})},
            [f"spec.selector: Invalid value: {{}}: empty selector is invalid for {owner}"],
        ),
        (
            kind,
            {"selector": SELECT, "template": template({"a": "b"}, restartPolicy="OnFailure")},
            [
                'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
                'supported values: "Always"'
            ],
        ),
        (
            kind,
            {"selector": SELECT, "template": template({"a": "b"}), "minReadySeconds": -1},
            ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
        ),
    ]
    if kind != "DaemonSet":
        cases.append(
            (
                kind,
                {"selector": SELECT, "template": template({"a": "b"}), "replicas": -2},
                ["spec.replicas: Invalid value: -2: must be greater than or equal to 0"],
            )
        )
    return cases


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [c for k in ("ReplicaSet", "StatefulSet", "DaemonSet") for c in other_cases(k)],
)
def test_other_workload_specs_read_as_kubes(
    kind: str, spec: dict[str, Any], expected: list[str]
) -> None:
    workload: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "spec": spec}
    apply_defaults("apps", kind, workload)
    if kind == "DaemonSet":
        errs = validate_daemonset_spec(workload["spec"])
    else:
        errs = validate_replicated_spec(kind, workload["spec"])
    assert [str(e) for e in errs] == expected


@pytest.mark.parametrize(
    ("rolling", "expected"),
    [
        (
            {"maxSurge": 0, "maxUnavailable": 0},
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: "
                "may not be 0 when `maxSurge` is 0"
            ],
        ),
        (
            {"maxSurge": "120%", "maxUnavailable": "150%"},
            [
                'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": '
                "must not be greater than 100%"
            ],
        ),
        (
            {"maxSurge": -1},
            [
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: "
                "must be greater than or equal to 0"
            ],
        ),
        ({"maxSurge": 1, "maxUnavailable": "25%"}, []),
    ],
)
def test_rolling_update_limits_read_as_kubes(rolling: dict[str, Any], expected: list[str]) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": rolling}
    spec = {"selector": SELECT, "template": template({"a": "b"}), "strategy": strategy}
    assert [str(e) for e in validate_deployment_spec(spec)] == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"schedule": "not a schedule"},
            [
                'spec.schedule: Invalid value: "not a schedule": expected exactly 5 fields, '
                "found 3: [not a schedule]"
            ],
        ),
        (
            {"schedule": "* * * * *", "concurrencyPolicy": "Bogus"},
            [
                'spec.concurrencyPolicy: Unsupported value: "Bogus": supported values: '
                '"Allow", "Forbid", "Replace"'
            ],
        ),
        ({}, ["spec.schedule: Required value"]),
        ({"schedule": "@hourly"}, []),
        (
            {"schedule": "CRON_TZ=UTC 0 3 * * 1"},
            [
                'spec.schedule: Invalid value: "CRON_TZ=UTC 0 3 * * 1": cannot use TZ or CRON_TZ '
                "in schedule, use timeZone field instead"
            ],
        ),
    ],
)
def test_cronjob_specs_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    pod = {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
    spec = {**spec, "jobTemplate": {"spec": {"template": {"spec": pod}}}}
    assert [str(e) for e in validate_cronjob_spec(spec)] == expected


def test_an_update_keeps_a_tz_prefix_it_had() -> None:
    pod = {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
    spec = {
        "schedule": "CRON_TZ=UTC 0 3 * * 1",
        "jobTemplate": {"spec": {"template": {"spec": pod}}},
    }
    assert validate_cronjob_spec(spec, old=spec) == []
    template = spec["jobTemplate"]["spec"]["template"]
    template["spec"] = {**pod, "restartPolicy": "Always"}
    assert [str(e) for e in validate_cronjob_spec(spec, old=spec)] == [
        "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "
        '"OnFailure", "Never"'
    ]


T = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
S = {"matchLabels": {"a": "b"}}


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        # as kube-apiserver v1.36 answered each (reference, dry-run creates)
        (
            "StatefulSet",
            {
                "selector": S,
                "template": T,
                "podManagementPolicy": "Foo",
                "updateStrategy": {"type": "Bar"},
            },
            [
                "spec.podManagementPolicy: Invalid value: \"Foo\": must be 'OrderedReady' or 'Parallel'",
                'spec.updateStrategy: Invalid value: {"Type":"Bar","RollingUpdate":null}: must be '
                "'RollingUpdate' or 'OnDelete'",
            ],
        ),
        (
            "StatefulSet",
            {
                "selector": S,
                "template": T,
                "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {}}],
            },
            [
                "spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access "
                "mode is required",
                "spec.volumeClaimTemplates[0].spec.resources[storage]: Required value",
            ],
        ),
        (
            "DaemonSet",
            {"selector": S, "template": T, "updateStrategy": {"type": "Foo"}},
            [
                'spec.updateStrategy: Unsupported value: {"Type":"Foo","RollingUpdate":null}: '
                'supported values: "RollingUpdate", "OnDelete"'
            ],
        ),
    ],
)
def test_set_strategies_and_claims_as_kube(
    kind: str, spec: dict[str, Any], expected: list[str]
) -> None:
    obj = {"kind": kind, "spec": spec}
    apply_defaults("apps", kind, obj)
    validate = validate_statefulset_spec if kind == "StatefulSet" else validate_daemonset_spec
    assert [str(e) for e in validate(obj["spec"])] == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {},
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ],
        ),
        (
            {"accessModes": ["Foo"], "resources": {"requests": {"storage": "0"}}},
            [
                'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", '
                '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
                'spec.resources[storage]: Invalid value: "0": must be greater than zero',
            ],
        ),
    ],
)
def test_claims_as_kube(spec: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate_claim_spec(spec, "spec")] == expected


JOB_POD = {"restartPolicy": "Never", "containers": C}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"backoffLimitPerIndex": 1},
            ["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"],
        ),
        (
            {"completionMode": "Indexed", "completions": 200000, "parallelism": 200000},
            [
                "spec.parallelism: Invalid value: 200000: must be less than or equal to "
                "100000 when completion mode is Indexed"
            ],
        ),
        (
            {"completionMode": "Indexed", "completions": 2, "maxFailedIndexes": 3},
            [
                "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                "spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
            ],
        ),
        (
            {"successPolicy": {"rules": [{"succeededCount": 1}]}},
            [
                'spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":null,'
                '"SucceededCount":1}]}: requires indexed completion mode'
            ],
        ),
    ],
)
def test_job_counts_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    """As kube-apiserver v1.36 answered these (reference)."""
    full = {"template": {"spec": JOB_POD}, "parallelism": 1, **spec}
    assert [str(e) for e in validate_job_spec(full)] == expected


@pytest.mark.parametrize(
    ("rolling", "expected"),
    [
        (
            {"maxSurge": "abc", "maxUnavailable": 1},
            [
                'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "abc": a valid '
                "percent string must be a numeric string followed by an ending '%' (e.g. '1%',"
                "  or '93%', regex used for validation is '[0-9]+%')",
            ],
        ),
        (
            {"maxSurge": 0, "maxUnavailable": 0},
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 "
                "when maxSurge is 0"
            ],
        ),
        (  # not a percent: strconv.Atoi reads it (-1), so not zero (the reference's)
            {"maxUnavailable": "-1"},
            [
                'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "-1": a valid '
                "percent string must be a numeric string followed by an ending '%' (e.g. '1%',"
                "  or '93%', regex used for validation is '[0-9]+%')",
            ],
        ),
    ],
)
def test_daemonset_rolling_updates_read_as_kubes(
    rolling: dict[str, Any], expected: list[str]
) -> None:
    spec = {
        "selector": SELECT,
        "template": template({"a": "b"}),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
    }
    assert [str(e) for e in validate_daemonset_spec(spec)] == expected


@pytest.mark.parametrize(
    ("rolling", "shown"),
    [
        # as the reference showed a DaemonSet's and a Deployment's unknown strategy type
        ({"maxUnavailable": 2, "maxSurge": "10%"}, '{"MaxUnavailable":2,"MaxSurge":"10%"}'),
        ({}, '{"MaxUnavailable":0,"MaxSurge":0}'),
        (None, "null"),
    ],
)
def test_an_unknown_strategy_shows_kubes_internal_rolling_update(
    rolling: dict[str, Any] | None, shown: str
) -> None:
    strategy: dict[str, Any] = {"type": "Foo"}
    if rolling is not None:
        strategy["rollingUpdate"] = rolling
    value = f'{{"Type":"Foo","RollingUpdate":{shown}}}'
    daemonset = {"selector": S, "template": T, "updateStrategy": strategy}
    assert [str(e) for e in validate_daemonset_spec(daemonset)] == [
        f'spec.updateStrategy: Unsupported value: {value}: supported values: "RollingUpdate", '
        '"OnDelete"'
    ]
    deployment = {"selector": S, "template": T, "strategy": strategy}
    assert [str(e) for e in validate_deployment_spec(deployment)] == [
        f'spec.strategy: Unsupported value: {value}: supported values: "Recreate", "RollingUpdate"'
    ]


@pytest.mark.parametrize(
    ("strategy", "defaulted"),
    [
        ({"type": "OnDelete", "rollingUpdate": {}}, {"maxUnavailable": 0, "maxSurge": 0}),
        (
            {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 2}},
            {"maxUnavailable": 2, "maxSurge": 0},
        ),
        ({"type": "OnDelete"}, None),
        ({"type": "RollingUpdate"}, {"maxUnavailable": 1, "maxSurge": 0}),
    ],
)
def test_a_daemon_sets_rolling_update_reads_back_as_kubes_internal_one(
    strategy: dict[str, Any], defaulted: dict[str, Any] | None
) -> None:
    """Defaults for RollingUpdate; the internal struct's zero values for any other."""
    obj = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"updateStrategy": strategy}}
    apply_defaults("apps", "DaemonSet", obj)
    assert obj["spec"]["updateStrategy"].get("rollingUpdate") == defaulted
