"""Pod and Job spec rules, case by case as kube-apiserver v1.36 answered each (reference)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.podspec import validate_pod_spec
from platform_api.registry.workloadspec import validate_job_spec

C = {"name": "c", "image": "i"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"containers": [{**C, "ports": [{"containerPort": 0}]}]},
            ["spec.containers[0].ports[0].containerPort: Required value"],
        ),
        (
            {"containers": [C], "restartPolicy": "Sometimes"},
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                '"Always", "OnFailure", "Never"'
            ],
        ),
        (
            {"containers": [{**C, "imagePullPolicy": "Bogus"}]},
            [
                'spec.containers[0].imagePullPolicy: Unsupported value: "Bogus": supported '
                'values: "Always", "IfNotPresent", "Never"'
            ],
        ),
        (
            {"containers": [{**C, "env": [{"name": ""}]}]},
            ["spec.containers[0].env[0].name: Required value"],
        ),
        (
            {
                "containers": [
                    {**C, "resources": {"limits": {"cpu": "1000m"}, "requests": {"cpu": "2"}}}
                ]
            },
            [
                'spec.containers[0].resources.requests: Invalid value: "2": must be less than '
                "or equal to cpu limit of 1"
            ],
        ),
        ({"containers": [{**C, "ports": [{"containerPort": 8080}]}]}, []),
    ],
)
def test_pod_spec_errors_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate_pod_spec(spec, "spec")] == expected


def test_job_pods_must_finish_and_counts_be_nonnegative() -> None:
    always = {"template": {"spec": {"containers": [C], "restartPolicy": "Always"}}}
    assert [str(e) for e in validate_job_spec(always)] == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    negative = {
        "parallelism": -1,
        "template": {"spec": {"containers": [C], "restartPolicy": "Never"}},
    }
    assert [str(e) for e in validate_job_spec(negative)] == [
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"
    ]
