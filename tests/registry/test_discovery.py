"""EndpointSlices validated and printed as kube-apiserver v1.36 did (reference: dry-run
creates, and ``kubectl get endpointslices``)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.endpoints.printers_cluster import _endpoint_slice_cells
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.discovery import HOSTNAME_LABEL, drop_topology, validate_endpoint_slice
from platform_api.validation.field import aggregate

KUBE_ANSWERS: list[tuple[str, dict[str, Any], str]] = [
    ("eps-no-type", {}, "addressType: Required value"),
    (
        "eps-bad-type",
        {"addressType": "Foo"},
        'addressType: Unsupported value: "Foo": supported values: "FQDN", "IPv4", "IPv6"',
    ),
    (
        "eps-bad-ip",
        {"addressType": "IPv4", "endpoints": [{"addresses": ["nope"]}]},
        'endpoints[0].addresses[0]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ),
    (
        "eps-v6-in-v4",
        {"addressType": "IPv4", "endpoints": [{"addresses": ["::1"]}]},
        '[endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address, endpoints[0].addresses[0]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)]',
    ),
    (
        "eps-no-addresses",
        {"addressType": "IPv4", "endpoints": [{"addresses": []}]},
        "endpoints[0].addresses: Required value: must contain at least 1 address",
    ),
    ("eps-port-range", {"addressType": "IPv4", "ports": [{"name": "a", "port": 70000}]}, ""),
    (
        "eps-port-proto",
        {"addressType": "IPv4", "ports": [{"name": "a", "port": 80, "protocol": "FOO"}]},
        'ports[0].protocol: Unsupported value: "FOO": supported values: "SCTP", "TCP", "UDP"',
    ),
    (
        "eps-port-name",
        {"addressType": "IPv4", "ports": [{"name": "Bad_Name", "port": 80}]},
        "ports[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    (
        "eps-dup-names",
        {"addressType": "IPv4", "ports": [{"port": 80}, {"port": 81}]},
        'ports[1].name: Duplicate value: ""',
    ),
    (
        "eps-fqdn-bad",
        {"addressType": "FQDN", "endpoints": [{"addresses": ["Bad_Host"]}]},
        "endpoints[0].addresses[0]: Invalid value: \"Bad_Host\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "eps-hostname",
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["1.2.3.4"], "hostname": "Bad_H", "nodeName": "Bad_N"}],
        },
        "[endpoints[0].nodeName: Invalid value: \"Bad_N\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), endpoints[0].hostname: Invalid value: \"Bad_H\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]",
    ),
    ("eps-label", {"addressType": "IPv4"}, ""),
    # IPv4 as kube's legacy fields take it, IPv6 strictly, FQDNs of two labels, hints
    (
        "eps-v4-legacy",
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["010.0.0.1"]}, {"addresses": ["::ffff:1.2.3.4"]}],
        },
        '[endpoints[0].addresses[0]: Invalid value: "010.0.0.1": must not have leading 0s, '
        'endpoints[1].addresses[0]: Invalid value: "::ffff:1.2.3.4": must not be an '
        "IPv4-mapped IPv6 address]",
    ),
    (
        "eps-v6-strict",
        {
            "addressType": "IPv6",
            "endpoints": [{"addresses": ["2001:DB8::1"]}, {"addresses": ["1.2.3.4"]}],
        },
        '[endpoints[0].addresses[0]: Invalid value: "2001:DB8::1": must be in canonical form '
        '("2001:db8::1"), endpoints[1].addresses: Invalid value: "1.2.3.4": must be an IPv6 '
        "address]",
    ),
    (
        "eps-fqdn-one-label",
        {"addressType": "FQDN", "endpoints": [{"addresses": ["foo"]}, {"addresses": ["foo.bar."]}]},
        'endpoints[0].addresses[0]: Invalid value: "foo": should be a domain with at least two '
        "segments separated by dots",
    ),
    (
        "eps-hints",
        {
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": ["10.0.0.1"],
                    "hints": {
                        "forZones": [{"name": "a"}, {"name": "a"}],
                        "forNodes": [{"name": "n"}],
                    },
                }
            ],
        },
        'endpoints[0].hints.forZones[1].name: Duplicate value: "a"',
    ),
    (
        "eps-hints-many",
        {
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": ["10.0.0.1"],
                    "hints": {"forZones": [{"name": str(i)} for i in range(9)]},
                }
            ],
        },
        "endpoints[0].hints.forZones: Too many: 9: must have at most 8 items",
    ),
]


@pytest.mark.parametrize(
    ("name", "body", "message"), KUBE_ANSWERS, ids=[c[0] for c in KUBE_ANSWERS]
)
def test_slices_refused_as_kube_refused_them(name: str, body: dict[str, Any], message: str) -> None:
    obj = {"kind": "EndpointSlice", "metadata": {"name": name}, **body}
    apply_defaults("discovery.platform.io", "EndpointSlice", obj)
    errs = validate_endpoint_slice(obj)
    assert (aggregate(errs) if errs else "") == message


def test_columns_as_kubectl_shows_them() -> None:
    many = {
        "metadata": {"name": "many"},
        "addressType": "IPv4",
        "ports": [{"port": p} for p in (1, 2, 3, 4)] + [{"name": "x"}],
        "endpoints": [
            {"addresses": ["10.0.0.1"]},
            {"addresses": ["10.0.0.2", "10.0.0.3"]},
            {"addresses": ["10.0.0.4", "10.0.0.5"]},
        ],
    }
    cells = _endpoint_slice_cells(many)
    assert cells[1:4] == ["IPv4", "1,2,3 + 2 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."]
    empty = _endpoint_slice_cells({"metadata": {"name": "e"}, "addressType": "FQDN"})
    assert empty[1:4] == ["FQDN", "<unset>", "<unset>"]


def test_counts_as_kube_bounds_them() -> None:
    """1000 endpoints of 100 addresses at most; 101 ports pass (reference)."""
    many = [{"addresses": [f"10.0.{i // 250}.{i % 250 + 1}"]} for i in range(1001)]
    errs = validate_endpoint_slice({"addressType": "IPv4", "endpoints": many})
    assert aggregate(errs) == "endpoints: Too many: 1001: must have at most 1000 items"
    wide = [{"addresses": [f"10.0.0.{i + 1}" for i in range(101)]}]
    errs = validate_endpoint_slice({"addressType": "IPv4", "endpoints": wide})
    assert aggregate(errs) == "endpoints[0].addresses: Too many: 101: must have at most 100 items"
    ports = [{"name": f"p{i}", "port": i + 1, "protocol": "TCP"} for i in range(101)]
    assert validate_endpoint_slice({"addressType": "IPv4", "ports": ports}) == []


def test_an_update_keeping_its_endpoints_is_not_refused_for_them() -> None:
    """kube's ValidateEndpointSlice: errors of endpoints an update left as they were are
    dropped (older servers took them): the reference answered a change of addressType
    to IPv6 with its immutability only (the strategy adds that)."""
    old = {"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}]}
    new = {**old, "addressType": "IPv6"}
    assert validate_endpoint_slice(new, old) == []
    assert [str(e) for e in validate_endpoint_slice(new)] == [
        'endpoints[0].addresses: Invalid value: "10.1.2.3": must be an IPv6 address',
    ]


def test_v1_takes_no_deprecated_topology() -> None:
    """kube's dropTopologyOnV1 (the reference stored none): dropped on create; on an
    update that changes the endpoints, a node name kept only there moves to nodeName."""
    created = {
        "metadata": {"name": "t"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": {"bad key!": "v"}}],
    }
    drop_topology(created, None)
    assert created["endpoints"] == [{"addresses": ["10.0.0.1"]}]
    old = {"endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": {HOSTNAME_LABEL: "n1"}}]}
    new = {"endpoints": [{"addresses": ["10.0.0.2"], "deprecatedTopology": {HOSTNAME_LABEL: "n1"}}]}
    drop_topology(new, old)
    assert new["endpoints"] == [{"addresses": ["10.0.0.2"], "nodeName": "n1"}]
    same = {"endpoints": old["endpoints"]}
    drop_topology(same, old)  # the endpoints as they were: left alone
    assert same["endpoints"][0]["deprecatedTopology"] == {HOSTNAME_LABEL: "n1"}


def test_localhost_is_the_one_single_label_name_a_slice_may_carry() -> None:
    """A deliberate difference from kube (README): ``localhost`` routes a selector-less
    Service to a process on this machine; other single labels are refused as kube does."""
    slice_ = {"addressType": "FQDN", "endpoints": [{"addresses": ["localhost", "other"]}]}
    assert [str(e) for e in validate_endpoint_slice(slice_)] == [
        'endpoints[0].addresses[1]: Invalid value: "other": should be a domain with at least '
        "two segments separated by dots"
    ]
