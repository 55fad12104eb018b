"""``kubectl drain`` on a real server: cordon, then evictions that respect a
PodDisruptionBudget the disruption controller keeps, while the ReplicaSet replaces the
evicted pods (a stand-in kubelet makes them Ready)."""

from __future__ import annotations

import json

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import create_crd, delete_crd, eventually
from tests.e2e.test_crd_clients import widget_crd
from tests.e2e.test_deployments import kubelet
from tests.e2e.test_list import make_namespace

MANIFEST = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""


def test_kubectl_drain_respects_the_budget(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "drain").split("/")[4]
    kubectl = server.kubectl
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "drain-n1"}}
    kubectl("apply", "-f", "-", stdin=json.dumps(node))
    pods_url = f"{server.url}/api/v1/namespaces/{ns}/pods"
    try:
        kubectl("apply", "-n", ns, "-f", "-", stdin=MANIFEST)
        eventually(lambda: len(admin.get(pods_url).json()["items"]) == 2, timeout=30)
        for pod in admin.get(pods_url).json()["items"]:  # what a scheduler would do
            name = pod["metadata"]["name"]
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}}
            binding["target"] = {"kind": "Node", "name": "drain-n1"}
            assert admin.post(f"{pods_url}/{name}/binding", json=binding).status_code == 201
        with kubelet(server, admin, ns):
            pdb = f"{server.url}/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web"
            eventually(lambda: admin.get(pdb).json()["status"]["disruptionsAllowed"] == 1)
            drained = kubectl("drain", "drain-n1", "--timeout=60s", timeout=90)
            assert "node/drain-n1 cordoned" in drained.stdout
            assert drained.stdout.strip().endswith("node/drain-n1 drained")
            # One eviction waited for the replacement to be Ready, as the budget asked.
            assert "Cannot evict pod as it would violate the pod's disruption budget" in (
                drained.stderr
            )
        # The ReplicaSet replaces the last evicted pod on its own time.
        eventually(lambda: len(admin.get(pods_url).json()["items"]) == 2, timeout=30)
        pods = admin.get(pods_url).json()["items"]
        assert all(not p["spec"].get("nodeName") for p in pods)  # none left on the Node
        node_now = admin.get(f"{server.url}/api/v1/nodes/drain-n1").json()
        assert node_now["spec"]["unschedulable"] is True
    finally:
        kubectl("delete", "node", "drain-n1", check=False)


def test_a_budget_counts_a_custom_resources_scale(server: Server, admin: requests.Session) -> None:
    """kube's getScaleController: pods owned by a custom resource count by its scale (the
    CRD's specReplicasPath); a kind without a scale subresource fails safe, kube's words."""
    group = "pdb.example.com"
    ns = make_namespace(admin, server, "pdb-scale").split("/")[4]
    create_crd(admin, server, widget_crd(group))
    base = f"{server.url}/apis/{group}/v1/namespaces/{ns}/widgets"
    pods_url = f"{server.url}/api/v1/namespaces/{ns}/pods"
    pdb_url = f"{server.url}/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    try:
        widget = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w"}}
        widget["spec"] = {"size": 4}
        owner = admin.post(base, json=widget).json()
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}}
        plain = admin.post(f"{server.url}/api/v1/namespaces/{ns}/configmaps", json=cm).json()
        for name, app, by in (("w-0", "w", owner), ("w-1", "w", owner), ("c-0", "c", plain)):
            ref = {"apiVersion": by["apiVersion"], "kind": by["kind"], "controller": True}
            ref.update(name=by["metadata"]["name"], uid=by["metadata"]["uid"])
            meta = {"name": name, "labels": {"app": app}, "ownerReferences": [ref]}
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta}
            pod["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
            assert admin.post(pods_url, json=pod).status_code == 201
        for app in ("w", "c"):
            budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"}
            budget["metadata"] = {"name": app}
            budget["spec"] = {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}}
            assert admin.post(pdb_url, json=budget).status_code == 201
        expected = eventually(
            lambda: admin.get(f"{pdb_url}/w").json().get("status", {}).get("expectedPods")
        )
        assert (expected, admin.get(f"{pdb_url}/w").json()["status"]["desiredHealthy"]) == (4, 3)

        def failed() -> dict | None:
            conditions = admin.get(f"{pdb_url}/c").json().get("status", {}).get("conditions")
            return conditions[0] if conditions else None

        condition = eventually(failed)
        assert (condition["reason"], condition["message"]) == (
            "SyncFailed",
            "configmaps does not implement the scale subresource",
        )
    finally:
        delete_crd(admin, server, f"widgets.{group}")


def test_a_pod_under_two_budgets_is_not_evicted(server: Server, admin: requests.Session) -> None:
    """kube's eviction refuses a pod two budgets select with a bare Status of its own (a
    500 with no reason or details, as the reference answered), and keeps the pod."""
    ns = make_namespace(admin, server, "two-budgets").split("/")[4]
    pods = f"{server.url}/api/v1/namespaces/{ns}/pods"
    pod = {"metadata": {"name": "p", "labels": {"app": "p"}}}
    pod["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
    assert admin.post(pods, json=pod).status_code == 201
    running = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    merge = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(f"{pods}/p/status", data=json.dumps(running), headers=merge).ok
    budgets = f"{server.url}/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    for name in ("a", "b"):
        budget = {"metadata": {"name": name}}
        budget["spec"] = {"minAvailable": 0, "selector": {"matchLabels": {"app": "p"}}}
        assert admin.post(budgets, json=budget).status_code == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    refused = admin.post(f"{pods}/p/eviction", json=eviction)
    assert (refused.status_code, refused.json()) == (
        500,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction "
            "subresource does not support.",
            "code": 500,
        },
    )
    assert admin.get(f"{pods}/p").json()["metadata"].get("deletionTimestamp") is None
