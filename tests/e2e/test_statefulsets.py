"""StatefulSets on a real server, driven by stock kubectl: ordered pods with stable names
and claims, rollout status, set image, history and undo (ControllerRevisions), scale.
A stand-in kubelet makes pods Ready; no pod runs."""

from __future__ import annotations

import json

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_deployments import kubelet
from tests.e2e.test_list import make_namespace
from tests.e2e.test_replicasets import pods

MANIFEST = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: main, image: "postgres:16"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def images(server: Server, namespace: str) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
        for p in pods(server, namespace, "app=db")
    }


def test_kubectl_statefulset_rollout(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "sts").split("/")[4]
    kubectl = server.kubectl
    made = kubectl("apply", "-n", ns, "-f", "-", stdin=MANIFEST)
    assert made.stdout.strip() == "statefulset.apps/db created"
    with kubelet(server, admin, ns):
        status = kubectl("rollout", "status", "sts/db", "-n", ns, "--timeout=60s").stdout
        assert "partitioned roll out complete" in status or "rolling update complete" in status
        assert sorted(images(server, ns)) == ["db-0", "db-1"]
        claims = json.loads(kubectl("get", "pvc", "-n", ns, "-o", "json").stdout)["items"]
        assert sorted(c["metadata"]["name"] for c in claims) == ["data-db-0", "data-db-1"]
        kubectl("set", "image", "sts/db", "main=postgres:17", "-n", ns)
        kubectl("rollout", "status", "sts/db", "-n", ns, "--timeout=60s")
        eventually(lambda: set(images(server, ns).values()) == {"postgres:17"}, timeout=30)
        history = kubectl("rollout", "history", "sts/db", "-n", ns).stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == [
            "1",
            "2",
        ]
        undone = kubectl("rollout", "undo", "sts/db", "-n", ns)
        assert undone.stdout.strip() == "statefulset.apps/db rolled back"
        kubectl("rollout", "status", "sts/db", "-n", ns, "--timeout=60s")
        eventually(lambda: set(images(server, ns).values()) == {"postgres:16"}, timeout=30)
        kubectl("scale", "sts/db", "--replicas=1", "-n", ns)
        eventually(lambda: sorted(images(server, ns)) == ["db-0"], timeout=30)
    sts = json.loads(kubectl("get", "sts", "db", "-n", ns, "-o", "json").stdout)
    status = sts["status"]
    assert status["replicas"] == 1 and status["currentRevision"] == status["updateRevision"]
    revisions = json.loads(kubectl("get", "controllerrevisions", "-n", ns, "-o", "json").stdout)
    assert sorted(r["revision"] for r in revisions["items"]) == [2, 3]  # 1 came back as 3
    pod = pods(server, ns, "app=db")[0]
    assert pod["spec"]["hostname"] == "db-0" and pod["spec"]["subdomain"] == "db"
    # Through admission: the service account was mounted by the server, not the controller.
    assert pod["spec"]["serviceAccountName"] == "default"


def test_a_statefulset_with_a_bad_selector_is_refused(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "stsbad").split("/")[4]
    bad = MANIFEST.replace("matchLabels: {app: db}}", "matchLabels: {app: other}}")
    answer = server.kubectl("apply", "-n", ns, "-f", "-", stdin=bad, check=False)
    assert answer.returncode == 1
    assert (
        'The StatefulSet "db" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"db"}: `selector` does not match template `labels`'
    ) in answer.stderr
    assert pods(server, ns, "app=db") == []
