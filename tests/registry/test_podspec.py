"""Pod and Job spec rules, case by case as kube-apiserver v1.36 answered each (reference)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry import capabilities
from platform_api.registry.defaults import apply_defaults, pod_spec
from platform_api.registry.podspec import validate_pod_spec
from platform_api.registry.workloadspec import validate_job_spec

# Pods sent to kube-apiserver v1.36 (dry runs) and the 422 message each got, or "" for 201.
FIXTURES = Path(__file__).parent / "fixtures"
KUBE_ANSWERS = json.loads((FIXTURES / "pod_validation_kube.json").read_text())
# Every volume source, downwardAPI and projected files, env var selectors.
KUBE_ANSWERS += json.loads((FIXTURES / "pod_volumes_kube.json").read_text())
# Mounts and devices, resize policies, claims, pod-level resources, OS rules, ports.
KUBE_ANSWERS += json.loads((FIXTURES / "pod_spec_rules_kube.json").read_text())

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
        # ValidatePodSpec's own check, which an update meets (admission decides creates)
        (
            {"containers": [C], "preemptionPolicy": "a/b"},
            [
                'spec.preemptionPolicy: Unsupported value: "a/b": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
        ),
        ({"containers": [C], "preemptionPolicy": ""}, ["spec.preemptionPolicy: Required value"]),
        # a sleep hook ends within the grace period (the reference's words; zero allowed)
        (
            {"containers": [{**C, "lifecycle": {"preStop": {"sleep": {"seconds": -1}}}}]},
            [
                "spec.containers[0].lifecycle.preStop.sleep: Invalid value: -1: must be "
                "non-negative and less than terminationGracePeriodSeconds (30)"
            ],
        ),
        (
            {
                "terminationGracePeriodSeconds": 4,
                "initContainers": [
                    {
                        **C,
                        "restartPolicy": "Always",
                        "lifecycle": {"postStart": {"sleep": {"seconds": 5}}},
                    }
                ],
                "containers": [
                    {**C, "name": "d", "lifecycle": {"preStop": {"sleep": {"seconds": 4}}}}
                ],
            },
            [
                "spec.initContainers[0].lifecycle.postStart.sleep: Invalid value: 5: must be "
                "non-negative and less than terminationGracePeriodSeconds (4)"
            ],
        ),
        ({"containers": [{**C, "lifecycle": {"preStop": {"sleep": {"seconds": 0}}}}]}, []),
    ],
)
def test_pod_spec_errors_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    pod_spec(spec)  # as the server defaults a body before validating it
    assert [str(e) for e in validate_pod_spec(spec, "spec")] == expected


@pytest.mark.parametrize("case", KUBE_ANSWERS, ids=[c["name"][:60] for c in KUBE_ANSWERS])
def test_pods_are_refused_as_kube_refused_them(case: dict[str, Any]) -> None:
    """Volumes, mounts, ports, env, probes, resources, security contexts and the spec's
    own fields: every message, in kube's order, as the reference answered."""
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": copy.deepcopy(case["spec"])}
    apply_defaults("", "Pod", pod)
    errs = validate_pod_spec(pod["spec"], "spec", case["name"])
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


def test_a_template_may_leave_an_image_volume_to_be_filled() -> None:
    """A Deployment's template with an empty image volume and an empty RBD volume: the
    reference refused the RBD one only (a pod is refused for both)."""
    volumes = [{"name": "x", "rbd": {}}, {"name": "y", "image": {}}]
    template = {"spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}}
    apply_defaults("", "PodTemplate", {"template": template})
    spec = template["spec"]
    assert [str(e) for e in validate_pod_spec(spec, "spec.template.spec")] == [
        "spec.template.spec.volumes[0].rbd.monitors: Required value",
        "spec.template.spec.volumes[0].rbd.image: Required value",
    ]
    assert [str(e) for e in validate_pod_spec(spec, "spec", "p")][-1] == (
        "spec.volumes[1].image.reference: Required value"
    )


def test_gated_projections_are_checked_as_kube_checks_them_with_their_gates_on() -> None:
    """kube v1.36 drops clusterTrustBundle and podCertificate projections (gates off by
    default), so the reference cannot answer for them; these messages follow its
    validateProjectionSources."""
    sources = [
        {"clusterTrustBundle": {"name": "a", "signerName": "x.io/y", "path": "p"}},
        {"clusterTrustBundle": {"name": "x.io:y:ok", "path": "p"}},
        {"podCertificate": {"signerName": "kubernetes.io/x", "keyType": "RSA3072"}},
    ]
    spec = {
        "containers": [{"name": "c", "image": "i"}],
        "volumes": [{"name": "v", "projected": {"sources": sources}}],
    }
    at = "spec.volumes[0].projected"
    assert [str(e) for e in validate_pod_spec(spec, "spec", "p")] == [
        f"{at}.sources[0].clusterTrustBundle: Invalid value: "
        '{"Name":"a","SignerName":"x.io/y","LabelSelector":null,"Optional":null,"Path":"p"}: '
        "only one of name and signerName may be used",
        f'{at}: Invalid value: "p": conflicting duplicate paths',
        f"{at}.sources[2].podCertificate: Required value: specify at least one of "
        "credentialBundlePath, keyPath, and certificateChainPath",
    ]


@pytest.mark.parametrize(
    ("path", "problems"),
    [
        # kube's ValidateLocalNonReservedPath, as the reference answered a config map item
        ("..", ["must not contain '..'", "must not start with '..'"]),
        ("..x/../y", ["must not contain '..'", "must not start with '..'"]),
        ("..x", ["must not start with '..'"]),
        ("a/..", ["must not contain '..'"]),
        ("../a", ["must not contain '..'"]),
    ],
)
def test_projected_paths_read_as_kubes(path: str, problems: list[str]) -> None:
    volume = {"name": "v", "configMap": {"name": "c", "items": [{"key": "k", "path": path}]}}
    spec = {"containers": [{"name": "c", "image": "i"}], "volumes": [volume]}
    at = "spec.volumes[0].configMap.items[0].path"
    assert [str(e) for e in validate_pod_spec(spec, "spec", "p")] == [
        f'{at}: Invalid value: "{path}": {p}' for p in problems
    ]


def test_privileged_containers_need_the_clusters_permission() -> None:
    """kube's capabilities.AllowPrivileged (--allow-privileged), for pods and templates."""
    spec = {"containers": [{**C, "securityContext": {"privileged": True}}]}
    pod_spec(spec)
    assert validate_pod_spec(spec, "spec") == []
    capabilities.setup(capabilities.Capabilities(allow_privileged=False))
    try:
        assert [str(e) for e in validate_pod_spec(spec, "spec.template.spec")] == [
            "spec.template.spec.containers[0].securityContext.privileged: Forbidden: "
            "disallowed by cluster policy"
        ]
    finally:
        capabilities.setup(capabilities.Capabilities())
