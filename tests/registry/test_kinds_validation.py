"""Services, NetworkPolicies, HorizontalPodAutoscalers (bounds, metrics, behaviors), Jobs
and docker-config Secrets refused as kube-apiserver v1.36 refused each (reference: dry-run
creates); "" where kube accepted."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.configdata import SecretStrategy
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.policies import validate_autoscaler_spec, validate_network_policy_spec
from platform_api.registry.servicespec import validate_service
from platform_api.registry.workloadspec import validate_job_spec
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "svc-ext",
        {"ports": [{"port": 80}], "externalIPs": ["nope", "127.0.0.1", "10.0.0.1"]},
        '[spec.externalIPs[0]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), spec.externalIPs[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)]',
    ),
    (
        "svc-lbsr",
        {
            "ports": [{"port": 80}],
            "type": "LoadBalancer",
            "loadBalancerSourceRanges": ["1.2.3.4/99", "10.0.0.0/8"],
        },
        'spec.LoadBalancerSourceRanges[0]: Invalid value: "1.2.3.4/99": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ),
    (
        "svc-lbsr-notlb",
        {"ports": [{"port": 80}], "loadBalancerSourceRanges": ["10.0.0.0/8"]},
        "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
    ),
    ("svc-lbip", {"ports": [{"port": 80}], "type": "LoadBalancer", "loadBalancerIP": "nope"}, ""),
    (
        "np-port",
        {
            "podSelector": {},
            "ingress": [{"ports": [{"port": 70000, "protocol": "FOO"}]}],
            "policyTypes": ["Foo"],
        },
        '[spec.ingress[0].ports[0].protocol: Unsupported value: "FOO": supported values: "TCP", "UDP", "SCTP", spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress"]',
    ),
    (
        "np-cidr",
        {
            "podSelector": {},
            "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33", "except": ["11.0.0.0/8"]}}]}],
        },
        'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ),
    (
        "np-except",
        {
            "podSelector": {},
            "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/8"]}}]}],
        },
        'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "11.0.0.0/8": must be a strict subset of `cidr`',
    ),
    (
        "np-both",
        {
            "podSelector": {},
            "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}],
        },
        "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer",
    ),
    (
        "np-endport",
        {"podSelector": {}, "ingress": [{"ports": [{"port": "http", "endPort": 90}]}]},
        "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
    ),
    (
        "np-endport-lt",
        {"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80}]}]},
        "spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`",
    ),
    (
        "np-portname",
        {"podSelector": {}, "ingress": [{"ports": [{"port": "Bad_Name"}]}]},
        'spec.ingress[0].ports[0].port: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ),
    (
        "hpa-bad",
        {"scaleTargetRef": {"kind": "", "name": ""}, "minReplicas": 0, "maxReplicas": 0},
        '[spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.maxReplicas: Required value: must be set and greater than 0, spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]',
    ),
    (
        "hpa-metric",
        {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
            ],
        },
        "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
    ),
    (
        "hpa-minmax",
        {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "minReplicas": 5,
            "maxReplicas": 3,
        },
        "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`",
    ),
    (
        "hpa-type",
        {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "metrics": [{"type": "Foo"}],
        },
        'spec.metrics[0].type: Unsupported value: "Foo": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    ),
    (
        "hpa-target",
        {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Foo"}}}
            ],
        },
        '[spec.metrics[0].resource.target.type: Invalid value: "Foo": must be either Utilization, Value, or AverageValue, spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization]',
    ),
    (
        "hpa-ok",
        {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
        },
        "",
    ),
    (
        "job-mode",
        {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
            },
            "completionMode": "Foo",
        },
        'spec.completionMode: Unsupported value: "Foo": supported values: "NonIndexed", "Indexed"',
    ),
    (
        "job-indexed",
        {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
            },
            "completionMode": "Indexed",
        },
        "",
    ),
    (
        "job-podfail",
        {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
            },
            "podFailurePolicy": {
                "rules": [{"action": "Foo", "onExitCodes": {"operator": "In", "values": [1]}}]
            },
        },
        'spec.podFailurePolicy.rules[0].action: Unsupported value: "Foo": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
    ),
    (
        "job-suspend-ok",
        {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}
            },
            "suspend": True,
        },
        "",
    ),
]
KINDS = {
    "svc": ("", "Service", validate_service),
    "np": ("networking.platform.io", "NetworkPolicy", validate_network_policy_spec),
    "hpa": ("autoscaling", "HorizontalPodAutoscaler", validate_autoscaler_spec),
    "job": ("batch", "Job", validate_job_spec),
}


@pytest.mark.parametrize(("name", "spec", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused_as_kube_refused_them(name: str, spec: dict[str, Any], message: str) -> None:
    group, kind, validate = KINDS[name.split("-", maxsplit=1)[0]]
    obj = {"kind": kind, "spec": spec}
    apply_defaults(group, kind, obj)
    errs = validate(obj["spec"])
    assert (aggregate(errs) if errs else "") == message


# An autoscaler's scaling behavior (kube's validateScalingRules), as the reference
# answered a dry-run create of a v2 autoscaler with each.
BEHAVIORS: list[tuple[str, dict[str, Any], str]] = [
    (
        "window-policy-types",
        {
            "scaleUp": {
                "stabilizationWindowSeconds": -1,
                "selectPolicy": "Bogus",
                "policies": [{"type": "Nope", "value": 0, "periodSeconds": 0}],
            }
        },
        '[spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero, spec.behavior.scaleUp.selectPolicy: Unsupported value: "Bogus": supported values: "Disabled", "Max", "Min", spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nope": supported values: "Percent", "Pods", spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero, spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 0: must be greater than zero]',
    ),
    (
        "too-long",
        {
            "scaleDown": {
                "stabilizationWindowSeconds": 3601,
                "policies": [
                    {"type": "Pods", "value": -2, "periodSeconds": 1801},
                    {"type": "Percent", "value": 50, "periodSeconds": 60},
                ],
            }
        },
        "[spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600, spec.behavior.scaleDown.policies[0].value: Invalid value: -2: must be greater than zero, spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800]",
    ),
    (
        "tolerance",
        {
            "scaleUp": {
                "tolerance": "-0.1",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 15}],
            }
        },
        'spec.behavior.scaleUp.tolerance: Invalid value: "-100m": must be greater than or equal to 0',
    ),
    (
        "no-value",
        {"scaleUp": {"policies": [{"type": "Pods", "periodSeconds": 15}]}},
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
    ),
    (
        "limits",
        {
            "scaleUp": {
                "stabilizationWindowSeconds": 3600,
                "selectPolicy": "Min",
                "policies": [{"type": "Percent", "value": 1, "periodSeconds": 1800}],
            }
        },
        "",
    ),
    ("disabled", {"scaleUp": {"tolerance": "0.05"}, "scaleDown": {"selectPolicy": "Disabled"}}, ""),
]


@pytest.mark.parametrize(("name", "behavior", "message"), BEHAVIORS, ids=[c[0] for c in BEHAVIORS])
def test_scaling_behaviors_as_kube_answered(
    name: str, behavior: dict[str, Any], message: str
) -> None:
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
    spec = {"scaleTargetRef": target, "maxReplicas": 3, "behavior": behavior}
    obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": spec}
    apply_defaults("autoscaling", "HorizontalPodAutoscaler", obj)
    errs = validate_autoscaler_spec(obj["spec"])
    assert (aggregate(errs) if errs else "") == message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "data[.dockerconfigjson]: Required value"),
        (
            {".dockerconfigjson": "bm90anNvbg=="},  # "notjson"
            'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid '
            "character 'o' in literal null (expecting 'u')",
        ),
        (
            {".dockerconfigjson": "W10="},  # "[]"
            'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot '
            "unmarshal array into Go value of type map[string]interface {}",
        ),
        ({".dockerconfigjson": "e30K"}, ""),  # "{}"
    ],
)
def test_docker_config_secrets(data: dict[str, str], message: str) -> None:
    rt = builtin_scheme().lookup("", "v1", "secrets")
    assert rt is not None
    secret = {"metadata": {"name": "s", "namespace": "n"}, "data": data}
    secret["type"] = "platform.io/dockerconfigjson"
    errs = SecretStrategy(rt).validate(secret)
    assert (aggregate(errs) if errs else "") == message


@pytest.mark.parametrize(
    ("group", "kind", "spec", "defaulted"),
    [
        (
            "networking.platform.io",
            "NetworkPolicy",
            {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]},
            {
                "podSelector": {},
                "ingress": [{"ports": [{"port": 80, "protocol": "TCP"}]}],
                "policyTypes": ["Ingress"],
            },
        ),
        (
            "networking.platform.io",
            "NetworkPolicy",
            {"podSelector": {}, "egress": [{"ports": [{"port": 53, "protocol": None}]}]},
            {
                "podSelector": {},
                "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
                "policyTypes": ["Ingress", "Egress"],
            },
        ),
        (
            "networking.platform.io",
            "NetworkPolicy",
            {"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]},
            {"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]},
        ),
        (
            "flowcontrol.apiserver.platform.io",
            "FlowSchema",
            {"priorityLevelConfiguration": {"name": "p"}},
            {"priorityLevelConfiguration": {"name": "p"}, "matchingPrecedence": 1000},
        ),
    ],
)
def test_defaults_set_as_kube_decodes(
    group: str, kind: str, spec: dict[str, Any], defaulted: dict[str, Any]
) -> None:
    """Defaults are set where kube's decoding sets them, so the writer's managedFields
    own them too (``f:policyTypes``, ``f:matchingPrecedence``, as kube v1.36 records)."""
    obj: dict[str, Any] = {"kind": kind, "spec": spec}
    apply_defaults(group, kind, obj)
    assert obj["spec"] == defaulted


def test_a_policy_without_a_spec_is_defaulted_as_an_empty_one() -> None:
    """Go's spec is a struct, defaulted whether the body names it or not: the reference
    recorded ``f:spec.f:policyTypes`` for a create with metadata alone."""
    obj: dict[str, Any] = {"kind": "NetworkPolicy", "metadata": {"name": "p"}}
    apply_defaults("networking.platform.io", "NetworkPolicy", obj)
    assert obj["spec"] == {"policyTypes": ["Ingress"]}


@pytest.mark.parametrize(
    ("annotations", "target"),
    [({}, 80), ({"autoscaling.alpha.kubernetes.io/metrics": "[]"}, None)],
)
def test_a_v1_autoscaler_stands_for_a_cpu_target_unless_it_carries_metrics(
    annotations: dict[str, str], target: int | None
) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"annotations": annotations},
        "spec": {"maxReplicas": 3},
    }
    apply_defaults("autoscaling", "HorizontalPodAutoscaler", obj)
    assert obj["spec"].get("targetCPUUtilizationPercentage") == target
    assert obj["spec"]["minReplicas"] == 1
