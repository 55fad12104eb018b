"""Deployments on a real server, driven by stock kubectl: create, rollout status, set
image, history, undo, scale.  A stand-in kubelet (a thread writing pod status, as kwok
does) makes pods Ready; no pod runs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace
from tests.e2e.test_replicasets import pods


@contextmanager
def kubelet(server: Server, admin: requests.Session, namespace: str) -> Iterator[None]:
    """Marks every pod of the namespace Running and Ready, and deletes each terminating
    bound one at once (a kubelet whose containers stop instantly), until the block ends."""
    stop = threading.Event()
    base = f"{server.url}/api/v1/namespaces/{namespace}/pods"

    def run() -> None:
        while not stop.is_set():
            for pod in admin.get(base).json().get("items", []):
                meta = pod["metadata"]
                if meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds"):
                    admin.delete(f"{base}/{meta['name']}", params={"gracePeriodSeconds": "0"})
                    continue
                if (pod.get("status") or {}).get("phase") == "Running":
                    continue
                now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                ready = {"type": "Ready", "status": "True", "lastTransitionTime": now}
                patch = {"status": {"phase": "Running", "conditions": [ready]}}
                admin.patch(
                    f"{base}/{pod['metadata']['name']}/status",
                    data=json.dumps(patch),
                    headers={"Content-Type": "application/merge-patch+json"},
                )
            time.sleep(0.1)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def images(server: Server, namespace: str) -> set[str]:
    return {c["image"] for p in pods(server, namespace) for c in p["spec"]["containers"]}


def test_kubectl_rollouts(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "deploy").split("/")[4]
    kubectl = server.kubectl
    made = kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=3", "-n", ns)
    assert made.stdout.strip() == "deployment.apps/web created"
    with kubelet(server, admin, ns):
        status = kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        assert status.stdout.strip().endswith('deployment "web" successfully rolled out')
        kubectl("set", "image", "deployment/web", "nginx=nginx:1.26", "-n", ns)
        kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        eventually(lambda: images(server, ns) == {"nginx:1.26"}, timeout=30)
        history = kubectl("rollout", "history", "deployment/web", "-n", ns).stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == [
            "1",
            "2",
        ]
        undone = kubectl("rollout", "undo", "deployment/web", "-n", ns)
        assert undone.stdout.strip() == "deployment.apps/web rolled back"
        kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        eventually(lambda: images(server, ns) == {"nginx:1.25"}, timeout=30)
        kubectl("scale", "deployment/web", "--replicas=1", "-n", ns)
        eventually(lambda: len(pods(server, ns)) == 1, timeout=30)
    rs = json.loads(kubectl("get", "rs", "-n", ns, "-o", "json").stdout)["items"]
    revisions = sorted(
        (r["metadata"]["annotations"]["deployment.kubernetes.io/revision"], r["spec"]["replicas"])
        for r in rs
    )
    assert revisions == [("2", 0), ("3", 1)]  # revision 1's ReplicaSet became revision 3
    header, row = kubectl("get", "deployment", "web", "-n", ns).stdout.splitlines()
    assert header.split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert row.split()[:4] == ["web", "1/1", "1", "1"]
    events = kubectl("describe", "deployment", "web", "-n", ns).stdout
    assert "ScalingReplicaSet" in events and "Scaled down replica set" in events


def test_a_deployment_that_cannot_make_pods_says_why(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "deployquota").split("/")[4]
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "none"}}
    quota["spec"] = {"hard": {"pods": "0"}}
    assert admin.post(f"{server.url}/api/v1/namespaces/{ns}/resourcequotas", json=quota).ok
    server.kubectl("create", "deployment", "web", "--image=nginx", "-n", ns)
    url = f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments/web"

    def failure() -> dict[str, Any] | None:
        status = admin.get(url).json().get("status") or {}
        found = [c for c in status.get("conditions") or () if c["type"] == "ReplicaFailure"]
        return found[0] if found else None

    condition = eventually(failure)
    assert (condition["status"], condition["reason"]) == ("True", "FailedCreate")
    assert "exceeded quota: none" in condition["message"]
