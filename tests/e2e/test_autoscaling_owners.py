"""HorizontalPodAutoscalers written through autoscaling/v1 and v2: status kept, fields
released across versions, no-op applies, as kube-apiserver v1.36 answered the same
sequences (reference, 2026-12-07)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import MERGE
from tests.e2e.test_list import make_namespace

APPLY = {"Content-Type": "application/apply-patch+yaml"}
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}


def _hpa(v: str, name: str, **spec: Any) -> dict[str, Any]:
    meta = {"name": name}
    return {
        "apiVersion": f"autoscaling/{v}",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": spec,
    }


def _base(server: Server, admin: requests.Session, ns: str) -> str:
    make_namespace(admin, server, ns)
    return f"{server.url}/apis/autoscaling/{{}}/namespaces/{ns}/horizontalpodautoscalers"


def _with_status(admin: requests.Session, v1: str, name: str, cpu: int, *managers: str) -> None:
    """An HPA created by an apply through v1 (manager m), then its status applied through
    v1 by each of ``managers`` in turn: ``cpu`` percent used."""
    body = _hpa("v1", name, scaleTargetRef=TARGET, maxReplicas=3)
    assert admin.patch(f"{v1}/{name}?fieldManager=m", json=body, headers=APPLY).status_code == 201
    status = {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": cpu}
    body = {**_hpa("v1", name), "status": status}
    del body["spec"]
    for manager in managers:
        assert admin.patch(
            f"{v1}/{name}/status?fieldManager={manager}", json=body, headers=APPLY
        ).ok


def test_a_v1_write_keeps_the_stored_status(server: Server, admin: requests.Session) -> None:
    base = _base(server, admin, "hpa-status")
    v1, v2 = base.format("v1"), base.format("v2")
    _with_status(admin, v1, "a", 10, "s")
    current = [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 10}}}
    ]
    assert admin.get(f"{v2}/a").json()["status"]["currentMetrics"] == current
    # v1 carries it in an annotation whose average value is never absent ("0")...
    served = admin.get(f"{v1}/a").json()
    assert served["metadata"]["annotations"] == {
        "autoscaling.alpha.kubernetes.io/current-metrics": (
            '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":10,'
            '"currentAverageValue":"0"}}]'
        )
    }
    # ... and a write of the object through v1 keeps the stored status as it was
    assert admin.patch(f"{v1}/a", json={"spec": {"minReplicas": 2}}, headers=MERGE).ok
    served["spec"]["maxReplicas"] = 4
    served["metadata"].pop("resourceVersion")
    assert admin.put(f"{v1}/a", json=served).ok
    assert admin.get(f"{v2}/a").json()["status"]["currentMetrics"] == current
    # while a status written through v1 is read from that annotation, as kube reads it
    served = admin.get(f"{v1}/a").json()
    assert admin.put(f"{v1}/a/status", json=served).ok
    average = {"averageValue": "0", "averageUtilization": 10}
    assert (
        admin.get(f"{v2}/a").json()["status"]["currentMetrics"][0]["resource"]["current"] == average
    )


def test_an_applier_moving_to_v2_releases_what_it_set_in_v1(
    server: Server, admin: requests.Session
) -> None:
    base = _base(server, admin, "hpa-release")
    v1, v2 = base.format("v1"), base.format("v2")
    body = _hpa("v1", "b", scaleTargetRef=TARGET, maxReplicas=5, minReplicas=2)
    assert admin.patch(f"{v1}/b?fieldManager=m", json=body, headers=APPLY).status_code == 201
    body = _hpa("v2", "b", scaleTargetRef=TARGET, maxReplicas=3)
    r = admin.patch(f"{v2}/b?fieldManager=m", json=body, headers=APPLY)
    assert (r.status_code, r.json()["spec"]["minReplicas"]) == (200, 1)  # released, defaulted
    assert [
        (e["manager"], e["apiVersion"], e["fieldsV1"])
        for e in r.json()["metadata"]["managedFields"]
    ] == [
        (
            "m",
            "autoscaling/v2",
            {
                "f:spec": {
                    "f:maxReplicas": {},
                    "f:scaleTargetRef": {"f:apiVersion": {}, "f:kind": {}, "f:name": {}},
                }
            },
        )
    ]
    # An apply that changes nothing stamps no time, though the stored status holds a null
    # (currentMetrics), which the object as Go holds it has not.
    r = admin.patch(f"{v2}/b?fieldManager=n", json=_hpa("v2", "b"), headers=APPLY)
    (entry,) = [e for e in r.json()["metadata"]["managedFields"] if e["manager"] == "n"]
    assert "time" not in entry


def test_a_status_apply_that_changes_nothing_keeps_the_status(
    server: Server, admin: requests.Session
) -> None:
    """kube's field manager hands back the live object of a no-op apply, so the status
    does not take v1's round trip (whose average value is never absent)."""
    base = _base(server, admin, "hpa-noop")
    v1, v2 = base.format("v1"), base.format("v2")
    _with_status(admin, v1, "c", 20, "s1", "s2")  # s2 applies the same: only its entry is new
    current = {"averageUtilization": 20}
    assert (
        admin.get(f"{v2}/c").json()["status"]["currentMetrics"][0]["resource"]["current"] == current
    )
    managers = {e["manager"] for e in admin.get(f"{v2}/c").json()["metadata"]["managedFields"]}
    assert managers == {"m", "s1", "s2"}
