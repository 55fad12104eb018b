"""Ingresses, PodDisruptionBudgets and Leases refused as kube-apiserver v1.36 refused
each (reference: dry-run creates); "" where kube accepted."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.registry.coordination import validate_budget_spec, validate_lease_spec
from platform_api.registry.ingress import validate_ingress_spec
from platform_api.validation.field import aggregate

CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "ing-host",
        {
            "rules": [
                {
                    "host": "Foo_Bar",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
        "spec.rules[0].host: Invalid value: \"Foo_Bar\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "ing-rel",
        {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "relative",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
        'spec.rules[0].http.paths[0].path: Invalid value: "relative": must be an absolute path',
    ),
    (
        "ing-nopt",
        {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
    ),
    (
        "ing-badpt",
        {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Foo",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Foo": supported values: "Exact", "ImplementationSpecific", "Prefix"',
    ),
    (
        "ing-wild",
        {
            "rules": [
                {
                    "host": "*.foo.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Exact",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
        "",
    ),
    (
        "ing-wild-bad",
        {
            "rules": [
                {
                    "host": "foo.*.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Exact",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
        "spec.rules[0].host: Invalid value: \"foo.*.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "ing-ip",
        {
            "rules": [
                {
                    "host": "1.2.3.4",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Exact",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
        'spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
    ),
    (
        "ing-impl-regex",
        {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/a(.*)",
                                "pathType": "ImplementationSpecific",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
        "",
    ),
    (
        "ing-prefix-dslash",
        {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/a//b",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'",
    ),
    (
        "ing-tls-host",
        {
            "tls": [{"hosts": ["Bad_Host"], "secretName": "s"}],
            "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}},
        },
        "spec.tls[0].hosts[0]: Invalid value: \"Bad_Host\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (  # the reference's answer (2026-12-06)
        "ing-tls-secret",
        {
            "tls": [{"hosts": ["*"], "secretName": "Bad_Secret"}],
            "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}},
        },
        "[spec.tls[0].hosts[0]: Invalid value: \"*\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.tls[0].secretName: Invalid value: \"Bad_Secret\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]",
    ),
    (
        "ing-backend-both",
        {"defaultBackend": {"service": {"name": "s", "port": {"number": 80, "name": "http"}}}},
        'spec.defaultBackend: Invalid value: "": cannot set both port name & port number',
    ),
    (
        "ing-class",
        {
            "ingressClassName": "Bad_Class",
            "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}},
        },
        "spec.ingressClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "pdb-both",
        {"minAvailable": 1, "maxUnavailable": 1},
        'spec: Invalid value: {"MinAvailable":1,"Selector":null,"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
    ),
    (
        # the selector as metav1.LabelSelector marshals: matchLabels first, as Go
        # declares it, whatever order the request wrote
        "pdb-both-selector",
        {
            "minAvailable": "50%",
            "maxUnavailable": 1,
            "selector": {
                "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}],
                "matchLabels": {"b": "2", "a": "1"},
            },
        },
        'spec: Invalid value: {"MinAvailable":"50%","Selector":{"matchLabels":{"a":"1","b":"2"},"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
    ),
    (
        "pdb-pct",
        {"minAvailable": "120%"},
        'spec.minAvailable: Invalid value: "120%": must not be greater than 100%',
    ),
    (
        "pdb-neg",
        {"maxUnavailable": -1},
        "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "pdb-badpct",
        {"minAvailable": "abc"},
        "spec.minAvailable: Invalid value: \"abc\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ),
    (
        "pdb-policy",
        {"minAvailable": 1, "unhealthyPodEvictionPolicy": "Foo"},
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Foo": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ),
    (
        "lease-neg",
        {"leaseDurationSeconds": 0, "leaseTransitions": -1},
        "[spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]",
    ),
    ("lease-ok", {"holderIdentity": "x", "leaseDurationSeconds": 15}, ""),
    ("lease-strategy", {"strategy": "Foo", "preferredHolder": "x"}, ""),
]
VALIDATE = {"ing": validate_ingress_spec, "pdb": validate_budget_spec, "lease": validate_lease_spec}


@pytest.mark.parametrize(("name", "spec", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused_as_kube_refused_them(name: str, spec: dict[str, Any], message: str) -> None:
    errs = VALIDATE[name.split("-", maxsplit=1)[0]](spec)
    assert (aggregate(errs) if errs else "") == message


def test_an_update_keeps_a_tls_secret_name_stored_before_it_was_checked() -> None:
    """kube's allowInvalidSecretName: the name is checked unless the stored Ingress
    already names an invalid one."""
    spec = {
        "tls": [{"secretName": "Bad_Secret"}],
        "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}},
    }
    assert [e.field for e in validate_ingress_spec(spec)] == ["spec.tls[0].secretName"]
    assert validate_ingress_spec(spec, secret_names=False) == []
