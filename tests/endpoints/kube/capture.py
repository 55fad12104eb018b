"""Record kube-apiserver's Tables (what ``kubectl get`` asks for) of the kinds it prints.

Usage: python tests/endpoints/kube/capture.py <kubeconfig> (a kube-apiserver v1.36 whose
kubeconfig authenticates with a bearer token; ``/work/shared/tools/reference-apiserver``).
The objects of ``table_objects.yaml`` are applied with ``kubectl`` and given the statuses
below, then each resource is listed twice at once: as JSON (the objects) and as a Table.
``tables.json`` keeps, per resource, the objects, kube's column definitions and rows, and
the time of the listing (the rows' ages are relative to it).  The objects are deleted
afterwards: the default classes among them would change what others create.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time
from typing import Any

import requests
import urllib3
import yaml

HERE = pathlib.Path(__file__).resolve().parent
OBJECTS = HERE / "table_objects.yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
NS, PODS = "tables", "tables-pods"
_RUNNING = {"running": {"startedAt": "2026-11-29T12:00:00Z"}}


def _terminated(code: int, finished: str, **more: Any) -> dict[str, Any]:
    when = {"startedAt": "2026-11-29T10:00:00Z", "finishedAt": finished}
    return {"terminated": {"exitCode": code, **when, **more}}


def _container(name: str, state: dict[str, Any], **more: Any) -> dict[str, Any]:
    base = {"name": name, "image": "i", "imageID": "", "ready": False, "restartCount": 0}
    return {**base, "state": state, **more}


_RESTARTED = {"lastState": _terminated(1, "2026-11-29T11:00:00Z")}
STATUSES: list[tuple[str, dict[str, Any]]] = [
    (
        f"/api/v1/namespaces/{NS}/persistentvolumeclaims/pvc-bound",
        {
            "phase": "Bound",
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany", "ReadWriteOncePod"],
        },
    ),
    (
        f"/api/v1/namespaces/{NS}/persistentvolumeclaims/pvc-pending",
        {"phase": "Pending", "capacity": {"storage": "9Gi"}, "accessModes": ["ReadWriteOnce"]},
    ),
    ("/api/v1/persistentvolumes/tables-pv-bound", {"phase": "Bound"}),
    (
        "/api/v1/persistentvolumes/tables-pv-free",
        {"phase": "Failed", "reason": "Recycler failed", "message": "x"},
    ),
    (
        f"/api/v1/namespaces/{NS}/resourcequotas/quota",
        {
            "hard": {
                "cpu": "2",
                "memory": "1Gi",
                "requests.cpu": "1",
                "limits.memory": "2Gi",
                "limits.cpu": "1500m",
                "pods": "10",
                "requests.storage": "10Gi",
                "count/deployments.apps": "3",
            },
            "used": {"cpu": "500m", "memory": "512Mi", "requests.cpu": "0", "pods": "1"},
        },
    ),
    (
        f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/pdb-min",
        {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3},
    ),
    (
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses/ing-tls",
        {
            "loadBalancer": {
                "ingress": [
                    {"ip": "10.0.0.9"},
                    {"hostname": "lb.example.com"},
                    {"ip": "10.0.0.1"},
                    {"ip": "10.0.0.9"},
                ]
            }
        },
    ),
    (
        f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses/ing-two",
        {"loadBalancer": {"ingress": [{"hostname": "a-very-long-load-balancer-name.example.com"}]}},
    ),
    (
        f"/apis/apps/v1/namespaces/{NS}/daemonsets/ds-sel",
        {
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 2,
            "numberReady": 1,
            "updatedNumberScheduled": 2,
            "numberAvailable": 1,
            "numberMisscheduled": 0,
        },
    ),
    (
        f"/apis/apps/v1/namespaces/{NS}/statefulsets/sts",
        {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2},
    ),
    (f"/apis/apps/v1/namespaces/{NS}/replicasets/rs", {"replicas": 2, "readyReplicas": 1}),
    (
        f"/apis/apps/v1/namespaces/{NS}/deployments/dep",
        {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1},
    ),
    (f"/api/v1/namespaces/{NS}/replicationcontrollers/rc", {"replicas": 2, "readyReplicas": 2}),
    (
        "/api/v1/nodes/tables-node-a",
        {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                    "lastTransitionTime": "2026-11-29T10:00:00Z",
                }
            ],
            "addresses": [
                {"type": "Hostname", "address": "node-a"},
                {"type": "InternalIP", "address": "10.1.0.1"},
                {"type": "ExternalIP", "address": "1.1.1.1"},
                {"type": "InternalIP", "address": "10.1.0.2"},
            ],
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.1.0",
                "osImage": "Debian 12",
                "containerRuntimeVersion": "containerd://1.7",
                "kubeletVersion": "v1.36.2",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    ),
    (
        f"/api/v1/namespaces/{PODS}/pods/pod-run",
        {
            "phase": "Running",
            "podIPs": [{"ip": "10.2.0.5"}, {"ip": "fd00::5"}],
            "nominatedNodeName": "node-b",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "example.com/ready", "status": "True"},
            ],
            "containerStatuses": [
                _container("a", _RUNNING, ready=True, restartCount=3, **_RESTARTED),
                _container(
                    "b",
                    _RUNNING,
                    ready=True,
                    restartCount=1,
                    lastState=_terminated(1, "2026-11-29T11:30:00Z"),
                ),
            ],
        },
    ),
    (
        f"/api/v1/namespaces/{PODS}/pods/pod-init",
        {
            "phase": "Pending",
            "conditions": [{"type": "Initialized", "status": "False"}],
            "initContainerStatuses": [
                _container("i1", _terminated(0, "2026-11-29T10:00:01Z", reason="Completed")),
                _container(
                    "i2", {"waiting": {"reason": "CrashLoopBackOff"}}, restartCount=2, **_RESTARTED
                ),
            ],
            "containerStatuses": [_container("a", {"waiting": {"reason": "PodInitializing"}})],
        },
    ),
    (
        f"/api/v1/namespaces/{PODS}/pods/pod-done",
        {
            "phase": "Succeeded",
            "containerStatuses": [
                _container("a", _terminated(0, "2026-11-29T10:00:01Z", reason="Completed"))
            ],
        },
    ),
    (
        f"/api/v1/namespaces/{PODS}/pods/pod-sidecar",
        {
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [
                _container(
                    "side",
                    _RUNNING,
                    ready=True,
                    started=True,
                    restartCount=4,
                    lastState=_terminated(1, "2026-11-29T09:00:00Z"),
                )
            ],
            "containerStatuses": [_container("a", _RUNNING)],
        },
    ),
    (
        f"/api/v1/namespaces/{PODS}/pods/pod-crash",
        {
            "phase": "Running",
            "containerStatuses": [
                _container("a", _terminated(137, "2026-11-29T10:00:01Z", signal=9)),
                _container("b", _terminated(0, "2026-11-29T10:00:01Z", reason="Completed")),
            ],
        },
    ),
]
# Each list and the names it is narrowed to (None: all; API Priority and Fairness's own).
RESOURCES: list[tuple[str, str | None]] = [
    (f"/api/v1/namespaces/{NS}/persistentvolumeclaims", None),
    ("/api/v1/persistentvolumes", "tables-"),
    (f"/api/v1/namespaces/{NS}/resourcequotas", None),
    (f"/api/v1/namespaces/{NS}/limitranges", None),
    (f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets", None),
    (f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses", None),
    ("/apis/networking.k8s.io/v1/ingressclasses", "tables-"),
    (f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies", None),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", "tables-"),
    (f"/apis/apps/v1/namespaces/{NS}/daemonsets", None),
    (f"/apis/apps/v1/namespaces/{NS}/statefulsets", None),
    (f"/apis/apps/v1/namespaces/{NS}/controllerrevisions", None),
    (f"/apis/apps/v1/namespaces/{NS}/replicasets", None),
    (f"/apis/apps/v1/namespaces/{NS}/deployments", None),
    (f"/api/v1/namespaces/{NS}/replicationcontrollers", None),
    (f"/api/v1/namespaces/{NS}/serviceaccounts", None),
    (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles", None),
    (f"/api/v1/namespaces/{NS}/configmaps", None),
    (f"/api/v1/namespaces/{NS}/secrets", None),
    (f"/api/v1/namespaces/{NS}/services", None),
    (f"/apis/batch/v1/namespaces/{NS}/jobs", None),
    (f"/apis/batch/v1/namespaces/{NS}/cronjobs", None),
    (f"/api/v1/namespaces/{NS}/podtemplates", None),
    (f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", None),
    (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", None),
    ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "tables-"),
    (f"/apis/storage.k8s.io/v1/namespaces/{NS}/csistoragecapacities", None),
    (f"/api/v1/namespaces/{PODS}/pods", None),
    (f"/api/v1/namespaces/{NS}/events", None),
    (f"/apis/events.k8s.io/v1/namespaces/{NS}/events", None),
    ("/api/v1/namespaces", "tables"),
    ("/api/v1/nodes", "tables-"),
    ("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", None),
    ("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations", None),
    ("/apis/storage.k8s.io/v1/storageclasses", "tables-"),
    ("/apis/storage.k8s.io/v1/csidrivers", "tables-"),
    ("/apis/storage.k8s.io/v1/volumeattachments", "tables-"),
]


def _session(kubeconfig: str) -> tuple[requests.Session, str]:
    config = yaml.safe_load(pathlib.Path(kubeconfig).read_text())
    session = requests.Session()
    session.verify, session.trust_env = False, False
    session.headers["Authorization"] = "Bearer " + config["users"][0]["user"]["token"]
    return session, config["clusters"][0]["cluster"]["server"]


def _kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> None:
    kubectl = pathlib.Path(sys.executable).parent / "kubectl"
    subprocess.run([kubectl, "--kubeconfig", kubeconfig, *args], input=stdin, text=True, check=True)


def capture(session: requests.Session, server: str, path: str, prefix: str | None) -> Any:
    items = session.get(server + path).json()["items"]
    while True:  # ages count whole seconds: a listing within one second has one "now"
        now = time.time()
        table = session.get(server + path, headers={"Accept": TABLE}).json()
        if int(time.time()) == int(now):
            break
    keep = [prefix is None or i["metadata"]["name"].startswith(prefix) for i in items]
    for item in items:
        item["metadata"].pop("managedFields", None)
        (item["metadata"].get("annotations") or {}).pop(
            "kubectl.kubernetes.io/last-applied-configuration", None
        )
    return {
        "path": path,
        "now": now,
        "items": [i for i, k in zip(items, keep, strict=True) if k],
        "columnDefinitions": table["columnDefinitions"],
        "rows": [
            {k: v for k, v in row.items() if k != "object"}
            for row, k in zip(table["rows"] or [], keep, strict=True)
            if k
        ],
    }


def main(kubeconfig: str) -> None:
    urllib3.disable_warnings()
    session, server = _session(kubeconfig)
    try:
        _kubectl(kubeconfig, "apply", "--validate=false", "-f", str(OBJECTS))
        for path, status in STATUSES:
            r = session.patch(
                server + path + "/status",
                json={"status": status},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            r.raise_for_status()
        tables = [capture(session, server, path, prefix) for path, prefix in RESOURCES]
        lines = ",\n".join(json.dumps(t, sort_keys=True) for t in tables)
        (HERE / "tables.json").write_text(f"[\n{lines}\n]\n")
    finally:
        _delete(kubeconfig, session, server)


def _delete(kubeconfig: str, session: requests.Session, server: str) -> None:
    """Every object but the namespaces (without a namespace controller, a deleted one would
    stay Terminating); volumes and claims without the protection finalizers no controller
    would lift."""
    unprotected = {"metadata": {"finalizers": None}}
    merge = {"Content-Type": "application/merge-patch+json"}
    for name in ("tables-pv-bound", "tables-pv-free", "tables-pv-defaults"):
        session.patch(f"{server}/api/v1/persistentvolumes/{name}", json=unprotected, headers=merge)
    # the quota first: its usage of requests.storage is unknown, it would refuse the patches
    session.delete(f"{server}/api/v1/namespaces/{NS}/resourcequotas/quota")
    for name in ("pvc-bound", "pvc-pending", "pvc-noclass"):
        claim = f"{server}/api/v1/namespaces/{NS}/persistentvolumeclaims/{name}"
        session.patch(claim, json=unprotected, headers=merge)
    docs = [d for d in yaml.safe_load_all(OBJECTS.read_text()) if d and d["kind"] != "Namespace"]
    _kubectl(
        kubeconfig,
        "delete",
        "--ignore-not-found",
        "--wait=false",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(docs),
    )


if __name__ == "__main__":
    main(sys.argv[1])
