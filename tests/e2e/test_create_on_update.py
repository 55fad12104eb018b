"""A PUT to a name that does not exist creates only where kube's strategy allows it
(RBAC, leases, services, ...): as kube-apiserver v1.36 answered the same PUTs
(reference), a ClusterRole or Role is created, a RoleBinding is validated as a create,
and a ReplicationController is 404."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server

RBAC = "/apis/rbac.authorization.platform.io/v1"


def test_rbac_objects_are_created_by_a_put(server: Server, admin: requests.Session) -> None:
    role = {"metadata": {"name": "e2e-put"}, "rules": [{"verbs": ["get"], "apiGroups": [""]}]}
    role["rules"][0]["resources"] = ["pods"]
    created = admin.put(f"{server.url}{RBAC}/clusterroles/e2e-put", json=role)
    assert (created.status_code, created.json()["kind"]) == (201, "ClusterRole")
    again = admin.put(f"{server.url}{RBAC}/clusterroles/e2e-put", json=role)
    assert again.status_code == 200
    binding = admin.put(
        f"{server.url}{RBAC}/namespaces/default/rolebindings/e2e-put",
        json={"metadata": {"name": "e2e-put"}},
    )
    assert binding.status_code == 422
    assert binding.json()["message"] == (
        'RoleBinding.rbac.authorization.platform.io "e2e-put" is invalid: [roleRef.kind: '
        'Unsupported value: "": supported values: "Role", "ClusterRole", roleRef.name: '
        "Required value]"
    )


def test_a_replication_controller_is_not(server: Server, admin: requests.Session) -> None:
    path = "/api/v1/namespaces/default/replicationcontrollers/e2e-put"
    answer = admin.put(server.url + path, json={"metadata": {"name": "e2e-put"}})
    assert answer.status_code == 404
    assert answer.json()["message"] == 'replicationcontrollers "e2e-put" not found'
