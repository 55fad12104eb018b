"""Service validation, case by case as kube-apiserver v1.36 answered each (reference)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.servicespec import health_check_update_errors, validate_service

RFC1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
LOCAL_LB_ONLY = (
    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
)
CASES: list[tuple[dict[str, Any], list[str]]] = [
    (
        {"ports": [{"port": 0}]},
        [
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        ],
    ),
    (
        {"ports": [{"port": 80, "targetPort": 70000}]},
        ["spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
    ),
    (
        {"ports": [{"port": 80, "targetPort": "Bad_Name"}]},
        [
            'spec.ports[0].targetPort: Invalid value: "Bad_Name": must contain only '
            "alpha-numeric characters (a-z, 0-9), and hyphens (-)"
        ],
    ),
    (
        {"ports": [{"port": 80, "protocol": "ICMP"}]},
        [
            'spec.ports[0].protocol: Unsupported value: "ICMP": supported values: '
            '"SCTP", "TCP", "UDP"'
        ],
    ),
    (
        {"ports": [{"port": 80}, {"port": 81}]},
        ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"],
    ),
    (
        {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]},
        ['spec.ports[1].name: Duplicate value: "a"'],
    ),
    (
        {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
        [
            'spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,'
            '"Port":80,"TargetPort":0,"NodePort":0}'
        ],
    ),
    (
        {"ports": [{"name": "Bad_", "port": 80}]},
        [f'spec.ports[0].name: Invalid value: "Bad_": {RFC1123_LABEL}'],
    ),
    (
        {"type": "Bogus", "ports": [{"port": 80}]},
        [
            'spec.type: Unsupported value: "Bogus": supported values: '
            '"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'
        ],
    ),
    ({}, ["spec.ports: Required value"]),
    # The range is the allocator's (tests/admission/test_nodeports.py), as kube's.
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 5}]}, []),
    (
        {
            "ports": [{"port": 80}],
            "internalTrafficPolicy": "Bogus",
            "trafficDistribution": "Bogus",
        },
        [
            'spec.internalTrafficPolicy: Unsupported value: "Bogus": supported values: '
            '"Cluster", "Local"',
            'spec.trafficDistribution: Unsupported value: "Bogus": supported values: '
            '"PreferClose", "PreferSameZone", "PreferSameNode"',
        ],
    ),
    (
        {"ports": [{"port": 80, "nodePort": 30080}]},
        ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    ),
    (
        {"ports": [{"port": 80}], "sessionAffinity": "Bogus"},
        ['spec.sessionAffinity: Unsupported value: "Bogus": supported values: "ClientIP", "None"'],
    ),
    (
        {"ports": [{"port": 80}], "selector": {"Bad Key": "v"}},
        [f'spec.selector: Invalid value: "Bad Key": {NAME_PART}'],
    ),
    (
        {"ports": [{"port": 80, "appProtocol": "Bad Proto"}]},
        [f'spec.ports[0].appProtocol: Invalid value: "Bad Proto": {NAME_PART}'],
    ),
    ({"clusterIP": "None", "clusterIPs": ["None"], "ports": []}, []),  # as normalized
    ({"ports": [{"name": "http", "port": 80, "targetPort": "web"}], "selector": {"a": "b"}}, []),
    # Fields only some types may hold (kube v1.36's answers in this order):
    (
        {
            "type": "ClusterIP",
            "externalTrafficPolicy": "Cluster",
            "allocateLoadBalancerNodePorts": True,
            "loadBalancerClass": "a.io/b",
            "healthCheckNodePort": 30001,
            "loadBalancerSourceRanges": ["1.2.3.0/24"],
            "ports": [{"port": 80}],
        },
        [
            f"spec.LoadBalancerSourceRanges: Forbidden: {LB_ONLY}",
            f"spec.allocateLoadBalancerNodePorts: Forbidden: {LB_ONLY}",
            f"spec.loadBalancerClass: Forbidden: {LB_ONLY}",
            'spec.externalTrafficPolicy: Invalid value: "Cluster": may only be set for '
            "externally-accessible services",
            f"spec.healthCheckNodePort: Invalid value: 30001: {LOCAL_LB_ONLY}",
        ],
    ),
    (
        {"type": "NodePort", "externalTrafficPolicy": "Bogus", "ports": [{"port": 80}]},
        [
            'spec.externalTrafficPolicy: Unsupported value: "Bogus": supported values: '
            '"Cluster", "Local"'
        ],
    ),
    (
        {"type": "LoadBalancer", "loadBalancerClass": "Bad Name", "ports": [{"port": 80}]},
        [f'spec.loadBalancerClass: Invalid value: "Bad Name": {NAME_PART}'],
    ),
    (
        {
            "type": "LoadBalancer",
            "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 70000,
            "ports": [{"port": 80}],
        },
        ["spec.healthCheckNodePort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
    ),
    (
        {"type": "ExternalName", "externalName": "a.b", "externalTrafficPolicy": "Cluster"},
        [
            'spec.externalTrafficPolicy: Invalid value: "Cluster": may only be set for '
            "externally-accessible services"
        ],
    ),
    (
        {"type": "NodePort", "healthCheckNodePort": 30002, "ports": [{"port": 80}]},
        [f"spec.healthCheckNodePort: Invalid value: 30002: {LOCAL_LB_ONLY}"],
    ),
    ({"type": "ClusterIP", "externalIPs": ["1.2.3.4"], "ports": [{"port": 80}]}, []),
    *(
        (  # a headless Service has no address for a node port or a load balancer
            {"type": kind, "clusterIP": "None", "clusterIPs": ["None"], **ports},
            [
                f"spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for {kind} services"
            ],
        )
        for kind in ("NodePort", "LoadBalancer")
        for ports in ({"ports": [{"port": 80}]}, {})
    ),
    ({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}, []),
    (  # one node port per protocol (another protocol may share it)
        {
            "type": "NodePort",
            "ports": [
                {"name": "a", "port": 80, "nodePort": 30001},
                {"name": "b", "port": 81, "nodePort": 30001},
                {"name": "c", "port": 82, "nodePort": 30001, "protocol": "UDP"},
            ],
        },
        ["spec.ports[1].nodePort: Duplicate value: 30001"],
    ),
    ({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False, "ports": [{"port": 80}]}, []),
    *(
        (
            {
                "sessionAffinity": "ClientIP",
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": t}},
                "ports": [{"port": 80}],
            },
            [
                f"spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: {t}: must be "
                "greater than 0 and less than 86400"
            ],
        )
        for t in (0, -1, 86401)
    ),
    (
        {
            "sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86400}},
            "ports": [{"port": 80}],
        },
        [],
    ),
]


@pytest.mark.parametrize(("spec", "expected"), CASES)
def test_service_spec_errors_read_as_kubes(spec: dict[str, Any], expected: list[str]) -> None:
    service: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "spec": spec}
    apply_defaults("", "Service", service)
    assert [str(e) for e in validate_service(service["spec"])] == expected


def test_external_name_must_be_a_dns_subdomain() -> None:
    errs = validate_service({"type": "ExternalName", "externalName": "Bad_Host"})
    assert [e.field for e in errs] == ["spec.externalName"]
    assert str(errs[0]).startswith('spec.externalName: Invalid value: "Bad_Host": a lowercase')
    assert validate_service({"type": "ExternalName", "externalName": "db.example.com."}) == []


@pytest.mark.parametrize(
    ("spec", "defaulted"),
    [
        (
            {"type": "LoadBalancer"},
            {"externalTrafficPolicy": "Cluster", "allocateLoadBalancerNodePorts": True},
        ),
        ({"type": "NodePort"}, {"externalTrafficPolicy": "Cluster"}),
        ({"externalIPs": ["1.2.3.4"]}, {"externalTrafficPolicy": "Cluster"}),
        ({}, {}),
    ],
)
def test_type_dependent_defaults(spec: dict[str, Any], defaulted: dict[str, Any]) -> None:
    service: dict[str, Any] = {"spec": {**spec, "ports": [{"port": 80}]}}
    apply_defaults("", "Service", service)
    keys = ("externalTrafficPolicy", "allocateLoadBalancerNodePorts")
    assert {k: service["spec"][k] for k in keys if k in service["spec"]} == defaulted


@pytest.mark.parametrize(
    ("spec", "config"),
    [
        # as kube-apiserver v1.36 stored each: ClientIP's timeout defaults to 3 hours,
        # None (or no affinity) drops any config
        ({"sessionAffinity": "ClientIP"}, {"clientIP": {"timeoutSeconds": 10800}}),
        (
            {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {}},
            {"clientIP": {"timeoutSeconds": 10800}},
        ),
        (
            {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {}}},
            {"clientIP": {"timeoutSeconds": 10800}},
        ),
        (
            {
                "sessionAffinity": "None",
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}},
            },
            None,
        ),
        ({"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}, None),
    ],
)
def test_session_affinity_defaults(spec: dict[str, Any], config: Any) -> None:
    service: dict[str, Any] = {"spec": {**spec, "ports": [{"port": 80}]}}
    apply_defaults("", "Service", service)
    assert service["spec"].get("sessionAffinityConfig") == config
    assert validate_service(service["spec"]) == []


def test_a_local_load_balancers_health_check_port_is_fixed() -> None:
    """kube's validateServiceExternalTrafficFieldsUpdate (checked against v1.36)."""
    local = {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 31000}
    moved = {**local, "healthCheckNodePort": 31999}
    [error] = health_check_update_errors(moved, local)
    assert str(error) == "spec.healthCheckNodePort: Forbidden: field is immutable"
    assert health_check_update_errors(local, local) == []
    cluster = {**moved, "externalTrafficPolicy": "Cluster"}  # the port goes with Local
    assert health_check_update_errors(cluster, local) == []
