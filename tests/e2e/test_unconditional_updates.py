"""A PUT without a resourceVersion, to kinds kube keeps optimistic (a Lease, a
PodDisruptionBudget and its status), as kube-apiserver v1.36 answered (reference,
2026-12-08): 422 naming the resource; patches and PUTs with one go through."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace

MERGE = {"Content-Type": "application/merge-patch+json"}


def _refusal(resource: str, name: str) -> dict[str, Any]:
    message = "Invalid value: 0: must be specified for an update"
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{resource} "{name}" is invalid: metadata.resourceVersion: {message}',
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": resource.partition(".")[2],
            "kind": resource.partition(".")[0],
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": message,
                    "field": "metadata.resourceVersion",
                }
            ],
        },
        "code": 422,
    }


def test_a_lease_and_a_budget_need_the_version_they_replace(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "uncond").split("/")[4]
    leases = f"{server.url}/apis/coordination.platform.io/v1/namespaces/{ns}/leases"
    budgets = f"{server.url}/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    lease = {"apiVersion": "coordination.platform.io/v1", "kind": "Lease"}
    lease |= {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"}
    budget |= {"metadata": {"name": "b"}, "spec": {"minAvailable": 1}}
    for url, body, resource in (
        (leases, lease, "leases.coordination.platform.io"),
        (budgets, budget, "poddisruptionbudgets.policy"),
    ):
        name = body["metadata"]["name"]
        created = admin.post(url, json=body)
        assert created.status_code == 201
        for target in (f"{url}/{name}", f"{url}/{name}/status"):
            if target.endswith("/status") and url == leases:
                continue  # a Lease has no status
            r = admin.put(target, json=body)
            assert (r.status_code, r.json()) == (422, _refusal(resource, name))
        current = admin.get(f"{url}/{name}").json()
        assert admin.put(f"{url}/{name}", json=current).status_code == 200
        patch = {"metadata": {"labels": {"patched": "yes"}}}
        assert admin.patch(f"{url}/{name}", json=patch, headers=MERGE).status_code == 200
