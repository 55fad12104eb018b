"""The node lifecycle controller on a real server: a Node created tainted not-ready loses
the taint when it reports Ready (as kwok's and a kubelet's Nodes do), and gets the
pressure taint its conditions call for."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually


def taints(server: Server, name: str) -> list[tuple[str, str]]:
    node: dict[str, Any] = json.loads(server.kubectl("get", "node", name, "-o", "json").stdout)
    return [(t["key"], t["effect"]) for t in node["spec"].get("taints") or []]


def report(server: Server, name: str, **conditions: str) -> None:
    listed = [{"type": t, "status": s} for t, s in conditions.items()]
    patch = json.dumps({"status": {"conditions": listed}})
    server.kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", patch)


def test_taints_follow_reported_conditions(server: Server) -> None:
    made = server.kubectl(
        "create",
        "-f",
        "-",
        "-o",
        "json",
        stdin='{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lifecycle-1"}}',
    )
    assert [t["key"] for t in json.loads(made.stdout)["spec"]["taints"]] == [
        "node.platform.io/not-ready"
    ]
    report(server, "lifecycle-1", Ready="True")
    eventually(lambda: taints(server, "lifecycle-1") == [])
    report(server, "lifecycle-1", Ready="True", DiskPressure="True")
    eventually(
        lambda: taints(server, "lifecycle-1") == [("node.platform.io/disk-pressure", "NoSchedule")]
    )
    report(server, "lifecycle-1", Ready="False")
    eventually(
        lambda: (
            taints(server, "lifecycle-1")
            == [
                ("node.platform.io/not-ready", "NoSchedule"),
                ("node.platform.io/not-ready", "NoExecute"),
            ]
        )
    )
    server.kubectl("delete", "node", "lifecycle-1")


def test_pods_on_a_lost_node_are_evicted_after_their_toleration(server: Server) -> None:
    server.kubectl(
        "create",
        "-f",
        "-",
        stdin='{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lifecycle-2"}}',
    )
    report(server, "lifecycle-2", Ready="False")
    toleration = {
        "key": "node.platform.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 1,
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "on-lost-node", "namespace": "default"},
        "spec": {
            "nodeName": "lifecycle-2",
            "tolerations": [toleration],
            "containers": [{"name": "c", "image": "nginx"}],
        },
    }
    server.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    # Evicted: terminating for its grace period; with no kubelet on the lost Node to
    # finish it, it stays so (as in kube) until forced or the Node is deleted (podgc).
    evicted = server.kubectl(
        "wait",
        "--for=jsonpath={.metadata.deletionGracePeriodSeconds}=30",
        "pod/on-lost-node",
        "--timeout=30s",
        check=False,
    )
    assert evicted.returncode == 0, evicted.stderr
    forced = server.kubectl("delete", "pod", "on-lost-node", "--grace-period=0", "--force")
    assert 'pod "on-lost-node" force deleted' in forced.stdout
    events = server.kubectl(
        "get", "events", "--field-selector", "reason=TaintManagerEviction", "-o", "json"
    ).stdout
    messages = [e["message"] for e in json.loads(events)["items"]]
    assert "Marking for deletion Pod default/on-lost-node" in messages
    server.kubectl("delete", "node", "lifecycle-2")
