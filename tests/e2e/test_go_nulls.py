"""Fields Go writes as null when absent, and an EndpointSlice's generation: the requests
kube-apiserver v1.36 answered (reference, 2026-11-29), answered alike."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server

MERGE = {"Content-Type": "application/merge-patch+json"}
RBAC = "/apis/rbac.authorization.platform.io/v1"
SLICES = "/apis/discovery.platform.io/v1/namespaces/default/endpointslices"


def _fields(obj: dict[str, Any]) -> list[Any]:
    return [m["fieldsV1"] for m in obj["metadata"].get("managedFields") or []]


def test_roles_without_rules_have_null_rules_nobody_owns(
    server: Server, admin: requests.Session
) -> None:
    for path, kind in (
        (RBAC + "/namespaces/default/roles", "Role"),
        (RBAC + "/clusterroles", "ClusterRole"),
    ):
        body = {"apiVersion": RBAC[6:], "kind": kind, "metadata": {"name": "null-rules"}}
        made = admin.post(server.url + path, json=body).json()
        assert made["rules"] is None and _fields(made) == []
        got = admin.get(f"{server.url}{path}/null-rules").json()
        assert "rules" in got and got["rules"] is None
        admin.delete(f"{server.url}{path}/null-rules")


def test_an_endpoint_slice_counts_changes_and_labels(
    server: Server, admin: requests.Session
) -> None:
    body = {
        "apiVersion": "discovery.platform.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "gen-slice"},
        "addressType": "IPv4",
    }
    made = admin.post(server.url + SLICES, json=body).json()
    assert (made["metadata"]["generation"], made["endpoints"], made["ports"]) == (1, None, None)
    assert _fields(made) == [{"f:addressType": {}}]
    url = f"{server.url}{SLICES}/gen-slice"
    steps = [
        ({"metadata": {"annotations": {"a": "b"}}}, 1),
        ({"metadata": {"labels": {"a": "b"}}}, 2),
        ({"endpoints": [{"addresses": ["10.1.1.1"]}]}, 3),
    ]
    for patch, generation in steps:
        assert (
            admin.patch(url, json=patch, headers=MERGE).json()["metadata"]["generation"]
            == generation
        )
    admin.delete(url)
