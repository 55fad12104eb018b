"""Deleting a batch/v1 Job without a propagation policy, as kube-apiserver v1.36 does it
(reference): the pods are left (the ``orphan`` finalizer, which the garbage collector
acts on), with kube's warning; a policy named removes them, without it."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
WARNING = (
    '299 - "child pods are preserved by default when jobs are deleted; set '
    "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
    'suppress this warning"'
)


def job(name: str) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox"}
    spec = {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def pods_of(server: Server, admin: requests.Session, name: str) -> list[dict[str, Any]]:
    answer = admin.get(f"{server.url}{PODS}?labelSelector=job-name%3D{name}")
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def started(server: Server, admin: requests.Session, name: str) -> list[dict[str, Any]]:
    assert admin.post(server.url + JOBS, json=job(name)).status_code == 201
    return eventually(lambda: pods_of(server, admin, name))


def test_a_delete_naming_no_policy_leaves_the_pods(server: Server, admin: requests.Session) -> None:
    started(server, admin, "e2e-orphaned")
    answer = admin.delete(f"{server.url}{JOBS}/e2e-orphaned")
    assert answer.status_code == 200
    assert answer.headers["Warning"] == WARNING
    body = answer.json()
    assert (body["kind"], body["metadata"]["finalizers"]) == ("Job", ["orphan"])
    assert "deletionTimestamp" in body["metadata"]

    def orphaned() -> bool:
        gone = admin.get(f"{server.url}{JOBS}/e2e-orphaned").status_code == 404
        pods = pods_of(server, admin, "e2e-orphaned")
        return gone and bool(pods) and all("ownerReferences" not in p["metadata"] for p in pods)

    eventually(orphaned)
    missing = admin.delete(f"{server.url}{JOBS}/e2e-orphaned")
    assert (missing.status_code, missing.headers["Warning"]) == (404, WARNING)


def test_a_delete_naming_a_policy_follows_it_unwarned(
    server: Server, admin: requests.Session
) -> None:
    started(server, admin, "e2e-removed")
    options = {"propagationPolicy": "Background"}
    answer = admin.delete(f"{server.url}{JOBS}/e2e-removed", json=options)
    assert (answer.status_code, answer.json()["kind"]) == (200, "Status")
    assert "Warning" not in answer.headers
    # deleted by the garbage collector (gone, or terminating with no kubelet to end them)
    eventually(
        lambda: all(
            "deletionTimestamp" in p["metadata"] for p in pods_of(server, admin, "e2e-removed")
        )
    )
    collection = admin.delete(f"{server.url}{JOBS}?labelSelector=none%3Dhere")
    assert (collection.status_code, collection.headers["Warning"]) == (200, WARNING)
