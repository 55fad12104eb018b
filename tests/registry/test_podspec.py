"""Pod and Job spec rules, case by case as kube-apiserver v1.36 answered each (reference)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.defaults import apply_defaults, pod_spec
from platform_api.registry.podspec import validate_pod_spec
from platform_api.registry.workloadspec import validate_job_spec

# Pods sent to kube-apiserver v1.36 (dry runs) and the 422 message each got, or "" for 201.
KUBE_ANSWERS = json.loads(
    (Path(__file__).parent / "fixtures" / "pod_validation_kube.json").read_text()
)

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
    pod_spec(spec)  # as the server defaults a body before validating it
    assert [str(e) for e in validate_pod_spec(spec, "spec")] == expected


@pytest.mark.parametrize("case", KUBE_ANSWERS, ids=[c["name"] for c in KUBE_ANSWERS])
def test_pods_are_refused_as_kube_refused_them(case: dict[str, Any]) -> None:
    """Volumes, mounts, ports, env, probes, resources, security contexts and the spec's
    own fields: every message, in kube's order, as the reference answered."""
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": copy.deepcopy(case["spec"])}
    apply_defaults("", "Pod", pod)
    errs = validate_pod_spec(pod["spec"], "spec", pod=True)
    message = errors.invalid("Pod", "", case["name"], errs).message if errs else ""
    assert message == case["message"]


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
