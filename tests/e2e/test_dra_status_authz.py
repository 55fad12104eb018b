"""A ResourceClaim's status parts need their own permissions (kube v1.36's
DRAResourceClaimGranularStatusAuthorization), through a real server on RBAC: a writer
allowed resourceclaims/status is refused the allocation without resourceclaims/binding and
a driver's device status without resourceclaims/driver, as the reference answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server

NS = "claims-authz"
API = "/apis/resource.platform.io/v1"
RBAC = "/apis/rbac.authorization.platform.io/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        Path(tmp_path_factory.mktemp("claims")), "--authorization-mode=Node,RBAC"
    )
    yield running
    running.stop()


class _Alice:
    """``session``'s connection, each request impersonating alice."""

    def __init__(self, session: requests.Session) -> None:
        self.session = session

    def patch(self, url: str, *, json: Any, headers: dict[str, str]) -> requests.Response:
        return self.session.patch(url, json=json, headers={**headers, "Impersonate-User": "alice"})


def _role(name: str, rules: list[Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "rules": rules}


def _binding(role: str) -> dict[str, Any]:
    subject = {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.platform.io"}
    ref = {"apiGroup": "rbac.authorization.platform.io", "kind": "ClusterRole", "name": role}
    return {"metadata": {"name": f"alice-{role}"}, "roleRef": ref, "subjects": [subject]}


def test_status_parts_need_their_own_permissions(rbac_server: Server) -> None:
    admin = session_for(rbac_server, cert=rbac_server.admin_cert)
    url = rbac_server.url
    assert admin.post(url + "/api/v1/namespaces", json={"metadata": {"name": NS}}).ok
    assert admin.post(
        url + API + "/deviceclasses", json={"metadata": {"name": "gpu.example.com"}}
    ).ok
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
    claim = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [request]}}}
    assert admin.post(f"{url}{API}/namespaces/{NS}/resourceclaims", json=claim).ok
    status_rule = {"apiGroups": ["resource.platform.io"], "verbs": ["get", "patch"]}
    status_rule["resources"] = ["resourceclaims", "resourceclaims/status"]
    assert admin.post(url + RBAC + "/clusterroles", json=_role("claim-status", [status_rule])).ok
    made = admin.post(f"{url}{RBAC}/namespaces/{NS}/rolebindings", json=_binding("claim-status"))
    assert made.ok, made.text
    # alice's requests go on admin's connection, to the worker that made the grants: under
    # PLATFORM_E2E_WORKERS each replica learns RBAC changes from its own watch, a moment later.
    alice = _Alice(admin)
    status = f"{url}{API}/namespaces/{NS}/resourceclaims/c/status"
    result = {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d0"}
    allocate = {"status": {"allocation": {"devices": {"results": [result]}}}}

    refused: requests.Response = alice.patch(status, json=allocate, headers=MERGE)
    assert (refused.status_code, refused.json()["reason"]) == (422, "Invalid")
    assert refused.json()["message"] == (
        'ResourceClaim.resource.platform.io "c" is invalid: status.allocation: Forbidden: '
        'changing status.allocation or status.reservedFor requires resource="resourceclaims/'
        'binding", verb="patch" permission: resourceclaims.resource.platform.io is forbidden: '
        'User "alice" cannot patch resource "resourceclaims/binding" in API group '
        '"resource.platform.io" at the cluster scope'
    )
    binding = {"apiGroups": ["resource.platform.io"], "verbs": ["patch"]}
    binding["resources"] = ["resourceclaims/binding"]
    driver = {"apiGroups": ["resource.platform.io"], "verbs": ["arbitrary-node:patch"]}
    driver |= {"resources": ["resourceclaims/driver"], "resourceNames": ["gpu.example.com"]}
    assert admin.post(url + RBAC + "/clusterroles", json=_role("binder", [binding])).ok
    assert admin.post(url + RBAC + "/clusterrolebindings", json=_binding("binder")).ok
    assert alice.patch(status, json=allocate, headers=MERGE).status_code == 200

    device = {"status": {"devices": [{"driver": "gpu.example.com", "pool": "p", "device": "d0"}]}}
    refused = alice.patch(status, json=device, headers=MERGE)
    assert refused.status_code == 422
    assert refused.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": 'Forbidden: changing status.devices requires resource="resourceclaims/'
            'driver", verb="[arbitrary-node:patch]" permission: resourceclaims.resource.'
            'platform.io "gpu.example.com" is forbidden: User "alice" cannot arbitrary-node:patch'
            ' resource "resourceclaims/driver" in API group "resource.platform.io" in the '
            f'namespace "{NS}"',
            "field": "status.devices",
        }
    ]
    assert admin.post(url + RBAC + "/clusterroles", json=_role("driver", [driver])).ok
    assert admin.post(url + RBAC + "/clusterrolebindings", json=_binding("driver")).ok
    assert alice.patch(status, json=device, headers=MERGE).status_code == 200
