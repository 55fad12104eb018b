"""Stock ``kubectl get`` of the kinds kube prints columns for, against a real server: the
columns kube-apiserver v1.36 answers (its Tables, recorded for tests/endpoints), in kubectl's
own layout, plain and ``-o wide``."""

from __future__ import annotations

import re

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

MANIFEST = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {pods: "10", requests.cpu: "2", limits.memory: 2Gi}
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits: [{type: Container, default: {cpu: 500m}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  maxUnavailable: 50%
  selector: {matchLabels: {app: db}}
---
apiVersion: networking.platform.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com], secretName: tls}]
  rules:
  - host: a.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: b.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: networking.platform.io/v1
kind: NetworkPolicy
metadata: {name: web}
spec:
  podSelector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front, edge]}]
---
apiVersion: scheduling.platform.io/v1
kind: PriorityClass
metadata: {name: printers-e2e}
value: 1000
preemptionPolicy: Never
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {disktype: ssd}
      containers: [{name: agent, image: busybox:1.36}, {name: sidecar, image: nginx}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres:16}]
"""
RESOURCES = "pvc,quota,limits,pdb,ingress,netpol,priorityclass,ds,sts"
AGE = "<age>"
# kube-apiserver's answer to the same manifest: each kind's header and rows, in the order
# asked for (other tests' priority classes aside); ages and times stand as <age>.
KUBE = [
    (
        "NAME|STATUS|VOLUME|CAPACITY|ACCESS MODES|STORAGECLASS|VOLUMEATTRIBUTESCLASS|AGE",
        "persistentvolumeclaim/data|Pending||||fast|<unset>|<age>",
    ),
    (
        "NAME|REQUEST|LIMIT|AGE",
        "resourcequota/compute|pods: 0/10, requests.cpu: 0/2|limits.memory: 0/2Gi|<age>",
    ),
    ("NAME|CREATED AT", "limitrange/limits|<age>"),
    (
        "NAME|MIN AVAILABLE|MAX UNAVAILABLE|ALLOWED DISRUPTIONS|AGE",
        "poddisruptionbudget.policy/db|N/A|50%|0|<age>",
        "poddisruptionbudget.policy/web|2|N/A|0|<age>",
    ),
    (
        "NAME|CLASS|HOSTS|ADDRESS|PORTS|AGE",
        "ingress.networking.platform.io/web|nginx|a.example.com,b.example.com||80, 443|<age>",
    ),
    (
        "NAME|POD-SELECTOR|AGE",
        "networkpolicy.networking.platform.io/web|app=web,tier in (edge,front)|<age>",
    ),
    (
        "NAME|VALUE|GLOBAL-DEFAULT|AGE|PREEMPTIONPOLICY",
        "priorityclass.scheduling.platform.io/printers-e2e|1000|false|<age>|Never",
    ),
    (
        "NAME|DESIRED|CURRENT|READY|UP-TO-DATE|AVAILABLE|NODE SELECTOR|AGE",
        "daemonset.apps/agent|0|0|0|0|0|disktype=ssd|<age>",
    ),
    ("NAME|READY|AGE", "statefulset.apps/db|0/0|<age>"),
]
WIDE = {
    "persistentvolumeclaim/data": ("VOLUMEMODE", "Filesystem"),
    "daemonset.apps/agent": (
        "CONTAINERS|IMAGES|SELECTOR",
        "agent,sidecar|busybox:1.36,nginx|app=agent",
    ),
    "statefulset.apps/db": ("CONTAINERS|IMAGES", "db|postgres:16"),
}
_AGE = re.compile(r"^(\d+[smhdy])+$|^\d{4}-\d\d-\d\dT[\d:]+Z$")


def sections(output: str) -> list[tuple[str, list[str]]]:
    """kubectl's tables, one per kind: the header's columns and each row's cells, joined by
    ``|`` (cells cut where the header's columns start, so empty cells stay)."""
    tables = []
    for block in output.strip().split("\n\n"):
        header, *rows = block.splitlines()
        starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
        bounds = list(zip(starts, [*starts[1:], None], strict=True))
        cells = [[row[a:b].strip() for a, b in bounds] for row in rows]
        shown = ["|".join(AGE if _AGE.match(c) else c for c in row) for row in cells]
        tables.append(("|".join(header[a:b].strip() for a, b in bounds), shown))
    return tables


def _ours(tables: list[tuple[str, list[str]]]) -> list[tuple[str, ...]]:
    """Each table's header and the rows of the manifest's objects."""
    names = {row.split("|")[0] for _, *rows in KUBE for row in rows}
    return [(header, *(r for r in rows if r.split("|")[0] in names)) for header, rows in tables]


def test_kubectl_get_prints_kubes_columns(server: Server, admin: requests.Session) -> None:
    ns = make_namespace(admin, server, "printers").split("/")[4]
    server.kubectl("apply", "-n", ns, "-f", "-", stdin=MANIFEST)
    quota = f"{server.url}/api/v1/namespaces/{ns}/resourcequotas/compute"
    eventually(lambda: "used" in admin.get(quota).json().get("status", {}), timeout=30)
    plain = sections(server.kubectl("get", RESOURCES, "-n", ns).stdout)
    assert _ours(plain) == KUBE
    wide = sections(server.kubectl("get", RESOURCES, "-n", ns, "-o", "wide").stdout)
    expected = []
    for header, *rows in KUBE:
        extra, cells = WIDE.get(rows[0].split("|")[0], ("", ""))
        wider = [f"{row}|{cells}".strip("|") for row in rows]
        expected.append((f"{header}|{extra}".strip("|"), *wider))
    assert _ours(wide) == expected
