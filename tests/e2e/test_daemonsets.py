"""DaemonSets on a real server, driven by stock kubectl: a pod pinned to each (fake)
Node, rollout status and a rolling update, history.  A stand-in kubelet makes pods
Ready; no scheduler binds them, as none runs here."""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_deployments import kubelet
from tests.e2e.test_list import make_namespace

MANIFEST = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {role: edge}
      containers: [{name: main, image: "agent:1"}]
"""


def agent_pods(server: Server, namespace: str) -> dict[str, dict[str, Any]]:
    """Node name -> its pod (by the affinity that pins it)."""
    out = server.kubectl("get", "pods", "-n", namespace, "-l", "app=agent", "-o", "json").stdout
    pods: dict[str, dict[str, Any]] = {}
    for pod in json.loads(out)["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        terms = pod["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        pods[terms[0]["matchFields"][0]["values"][0]] = pod
    return pods


def test_kubectl_daemonset_rollout(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "ds").split("/")[4]
    kubectl = server.kubectl
    for name, role in (("ds-edge-1", "edge"), ("ds-edge-2", "edge"), ("ds-core-1", "core")):
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"role": role}},
        }
        kubectl("apply", "-f", "-", stdin=json.dumps(node))
    try:
        made = kubectl("apply", "-n", ns, "-f", "-", stdin=MANIFEST)
        assert made.stdout.strip() == "daemonset.apps/agent created"
        eventually(lambda: sorted(agent_pods(server, ns)) == ["ds-edge-1", "ds-edge-2"], timeout=30)
        with kubelet(server, admin, ns):
            status = kubectl("rollout", "status", "ds/agent", "-n", ns, "--timeout=60s").stdout
            assert 'daemon set "agent" successfully rolled out' in status
            kubectl("set", "image", "ds/agent", "main=agent:2", "-n", ns)
            kubectl("rollout", "status", "ds/agent", "-n", ns, "--timeout=60s")

            def updated() -> bool:
                pods = agent_pods(server, ns).values()
                return sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["agent:2"] * 2

            eventually(updated, timeout=30)
        history = kubectl("rollout", "history", "ds/agent", "-n", ns).stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        ds = json.loads(kubectl("get", "ds", "agent", "-n", ns, "-o", "json").stdout)
        status = ds["status"]
        assert (status["desiredNumberScheduled"], status["updatedNumberScheduled"]) == (2, 2)
        assert status["numberMisscheduled"] == 0
    finally:
        for name in ("ds-edge-1", "ds-edge-2", "ds-core-1"):
            kubectl("delete", "node", name, check=False)
