"""Events take no part in garbage collection (kube's rest.Unsupported): a delete asking
for foreground or orphan deletion adds no finalizer and drops those the event carries;
kube-apiserver v1.36 answered these requests so (reference, 2026-12-08)."""

from __future__ import annotations

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace


def _event(name: str, **meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, **meta},
        "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "R",
        "message": "m",
        "type": "Normal",
    }


@pytest.mark.parametrize("policy", ["Foreground", "Orphan"])
def test_a_deleted_event_gets_no_dependents_finalizer(
    server: Server, admin: requests.Session, policy: str
) -> None:
    ns = make_namespace(admin, server, f"evdel-{policy.lower()}").split("/")[4]
    events = f"{server.url}/api/v1/namespaces/{ns}/events"
    for name in ("plain", "held"):
        extra = {"finalizers": ["orphan", "example.com/x"]} if name == "held" else {}
        body = _event(name, namespace=ns, **extra)
        body["involvedObject"]["namespace"] = ns
        assert admin.post(events, json=body).status_code == 201
    uid = admin.get(f"{events}/plain").json()["metadata"]["uid"]
    r = admin.delete(f"{events}/plain", json={"propagationPolicy": policy})
    assert (r.status_code, r.json()) == (
        200,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": "plain", "kind": "events", "uid": uid},
        },
    )
    assert admin.get(f"{events}/plain").status_code == 404
    # the orphan finalizer it carried goes; another keeps it until it is removed
    r = admin.delete(f"{events}/held", json={"propagationPolicy": policy})
    meta = r.json()["metadata"]
    assert (r.status_code, meta["finalizers"], meta["deletionGracePeriodSeconds"]) == (
        200,
        ["example.com/x"],
        0,
    )
    drop = {"metadata": {"finalizers": None}}
    merge = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(f"{events}/held", json=drop, headers=merge).status_code == 200
    assert admin.get(f"{events}/held").status_code == 404
