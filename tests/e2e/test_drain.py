"""``kubectl drain`` on a real server: cordon, then evictions that respect a
PodDisruptionBudget the disruption controller keeps, while the ReplicaSet replaces the
evicted pods (a stand-in kubelet makes them Ready)."""

from __future__ import annotations

import json

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
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
