"""ReplicaSets and ReplicationControllers on a real server, driven by kubectl: their pods
are made through the request chain (admission applies), scaled, and collected."""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

MANIFEST = """
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    default: {cpu: 200m}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: nginx}]
"""


def pods(server: Server, namespace: str, selector: str = "app=web") -> list[dict[str, Any]]:
    out = server.kubectl(
        "get", "pods", "-n", namespace, "-l", selector, "-o", "json", "--show-managed-fields"
    ).stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def test_replicaset_pods_pass_admission_and_follow_scale(
    server: Server, admin: requests.Session
) -> None:
    namespace = make_namespace(admin, server, "rs").split("/")[4]
    server.kubectl("apply", "-n", namespace, "-f", "-", stdin=MANIFEST)
    made = eventually(lambda: len(pods(server, namespace)) == 3 and pods(server, namespace))
    for pod in made:
        # LimitRanger (admission) gave the container its default; the service account
        # admission its account; the field manager is kube-controller-manager's.
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["limits"] == {"cpu": "200m"}
        assert pod["spec"]["serviceAccountName"] == "default"
        assert [m["manager"] for m in pod["metadata"]["managedFields"]] == [
            "kube-controller-manager"
        ]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    status = json.loads(server.kubectl("get", "rs", "web", "-n", namespace, "-o", "json").stdout)
    assert eventually(
        lambda: (
            json.loads(server.kubectl("get", "rs", "web", "-n", namespace, "-o", "json").stdout)[
                "status"
            ].get("replicas")
            == 3
        )
    )
    assert status["metadata"]["generation"] == 1

    scaled = server.kubectl("scale", "rs", "web", "-n", namespace, "--replicas=1")
    assert scaled.stdout.strip() == "replicaset.apps/web scaled"
    eventually(lambda: len(pods(server, namespace)) == 1)
    described = server.kubectl("describe", "rs", "web", "-n", namespace).stdout
    assert "SuccessfulCreate" in described and "SuccessfulDelete" in described

    server.kubectl("delete", "rs", "web", "-n", namespace)  # background: the GC takes the pods
    eventually(lambda: pods(server, namespace) == [])


def test_refused_pods_become_a_replica_failure(server: Server, admin: requests.Session) -> None:
    namespace = make_namespace(admin, server, "rsquota").split("/")[4]
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "two"},
        "spec": {"hard": {"pods": "2"}},
    }
    r = admin.post(f"{server.url}/api/v1/namespaces/{namespace}/resourcequotas", json=quota)
    assert r.status_code == 201, r.text
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"app": "web"},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }
    url = f"{server.url}/api/v1/namespaces/{namespace}/replicationcontrollers"
    assert admin.post(url, json=rc).status_code == 201

    def failure() -> dict[str, Any] | None:
        status = admin.get(f"{url}/web").json().get("status") or {}
        found = [c for c in status.get("conditions") or () if c["type"] == "ReplicaFailure"]
        return found[0] if found and status.get("replicas") == 2 else None

    condition = eventually(failure)
    assert (condition["status"], condition["reason"]) == ("True", "FailedCreate")
    assert condition["message"].startswith("pods ") and condition["message"].endswith(
        "is forbidden: exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2"
    )
    assert len(pods(server, namespace)) == 2
