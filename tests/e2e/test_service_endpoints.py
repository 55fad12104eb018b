"""A Service's endpoints on a real server, through kubectl: the endpoints and endpointslice
controllers follow pods as a (fake) kubelet reports them; hand-made Endpoints are mirrored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Server, start_server
from tests.e2e.crds import eventually

MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: zone-a}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec:
  nodeName: n1
  containers: [{name: c, image: nginx, ports: [{name: http, containerPort: 8080}]}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("service-endpoints") / "data")
    running.kubectl("create", "namespace", "shop")
    yield running
    running.stop()


def get(server: Server, *args: str) -> dict:
    return json.loads(server.kubectl(*args, "-o", "json").stdout)  # type: ignore[no-any-return]


def report_ready(server: Server, pod: str, ip: str) -> None:
    """What a kubelet writes when the pod runs."""
    status = {
        "status": {
            "phase": "Running",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    }
    server.kubectl(
        "-n",
        "shop",
        "patch",
        "pod",
        pod,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(status),
    )


def test_a_service_follows_its_pods(server: Server) -> None:
    server.kubectl("apply", "-f", "-", stdin=MANIFESTS)
    eventually(lambda: get(server, "-n", "shop", "get", "endpoints", "web"))
    report_ready(server, "web-1", "10.244.0.5")

    def addresses() -> list[str]:
        subsets = get(server, "-n", "shop", "get", "endpoints", "web").get("subsets") or []
        return [a["ip"] for s in subsets for a in s.get("addresses") or []]

    eventually(lambda: addresses() == ["10.244.0.5"])
    listed = server.kubectl("-n", "shop", "get", "endpoints", "web").stdout.splitlines()
    assert listed[1].split()[:2] == ["web", "10.244.0.5:8080"]
    slices = get(
        server, "-n", "shop", "get", "endpointslices", "-l", "kubernetes.io/service-name=web"
    )["items"]
    (slice_,) = slices
    assert slice_["endpoints"][0]["addresses"] == ["10.244.0.5"]
    assert slice_["endpoints"][0]["zone"] == "zone-a"
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    server.kubectl("-n", "shop", "delete", "pod", "web-1", "--wait=false")
    eventually(lambda: addresses() == [])


def test_hand_made_endpoints_are_mirrored(server: Server) -> None:
    manifests = """
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec:
  ports: [{name: pg, port: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: shop}
subsets:
- addresses: [{ip: 192.0.2.10}]
  ports: [{name: pg, port: 5432}]
"""
    server.kubectl("apply", "-f", "-", stdin=manifests)
    selector = "kubernetes.io/service-name=db"

    def mirrored() -> list[dict]:
        return get(server, "-n", "shop", "get", "endpointslices", "-l", selector)["items"]  # type: ignore[no-any-return]

    eventually(lambda: len(mirrored()) == 1)
    (slice_,) = mirrored()
    assert slice_["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == (
        "endpointslicemirroring-controller.k8s.io"
    )
    assert slice_["endpoints"] == [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}]
    server.kubectl("-n", "shop", "delete", "endpoints", "db")
    eventually(lambda: mirrored() == [])


def test_pod_gc_fails_a_terminating_pod_no_node_will_finish(server: Server) -> None:
    """The pod garbage collector's pass (every 20 s): a pod being deleted that no node runs
    is marked Failed and deleted at once; here a finalizer keeps it to be read."""
    manifest = """
apiVersion: v1
kind: Pod
metadata: {name: unscheduled, namespace: shop, finalizers: [example.com/hold]}
spec: {containers: [{name: c, image: nginx}]}
"""
    server.kubectl("apply", "-f", "-", stdin=manifest)
    server.kubectl("-n", "shop", "delete", "pod", "unscheduled", "--wait=false")

    def phase() -> str:
        return (
            get(server, "-n", "shop", "get", "pod", "unscheduled")
            .get("status", {})
            .get("phase", "")
        )

    eventually(lambda: phase() == "Failed", timeout=30)
    server.kubectl(
        "-n",
        "shop",
        "patch",
        "pod",
        "unscheduled",
        "--type=merge",
        "-p",
        '{"metadata": {"finalizers": null}}',
    )
