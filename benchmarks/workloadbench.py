"""How fast Deployments get their pods: the deployment and replicaset controllers, whose
pods go through the whole request chain (the loopback client).

    python benchmarks/workloadbench.py [--replicas 1000] [--workers 1]

Starts this server, then: one Deployment of ``--replicas`` pods, timed until every pod
exists; the same scaled to 0, timed until none is left; and 8 Deployments of
``--replicas / 8`` pods each created at once, timed until all their pods exist.  Prints
pods/s for each, and the server's CPU seconds per pod (from /proc).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen

from platform_api.testing.server import ApiServer

NAMESPACE = "workload-bench"
APPS = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
TICKS = os.sysconf("SC_CLK_TCK")


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def cpu_seconds(pid: int) -> float:
    """The process and its children (workers), user + system."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def pod_count(target: loadgen.Target) -> int:
    status, body = loadgen.request(target.connect(), target, "GET", PODS + "?limit=1")
    assert status == 200, body
    listed = orjson.loads(body)
    return len(listed["items"]) + int(listed["metadata"].get("remainingItemCount") or 0)


def until(target: loadgen.Target, want: int, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while pod_count(target) != want:
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {want} pods")
        time.sleep(0.05)


def timed(target: loadgen.Target, pid: int, pods: int, step: Any, want: int) -> tuple[float, float]:
    """(pods/s, server CPU ms per pod) of ``step()`` until ``want`` pods exist."""
    cpu, start = cpu_seconds(pid), time.perf_counter()
    step()
    until(target, want)
    elapsed = time.perf_counter() - start
    return pods / elapsed, (cpu_seconds(pid) - cpu) / pods * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    n = args.replicas
    with tempfile.TemporaryDirectory(prefix="workloadbench-") as tmp:
        server = ApiServer.start(Path(tmp) / "data", "--workers", str(args.workers), timeout=60)
        assert server.process is not None
        pid = server.process.pid
        try:
            target = loadgen.from_kubeconfig(str(server.kubeconfig))
            conn = target.connect()
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            loadgen.request(conn, target, "POST", "/api/v1/namespaces", body)
            time.sleep(1)  # the namespace's default service account (pods need it)
            rows = []

            def create_one() -> None:
                loadgen.request(conn, target, "POST", APPS, deployment("one", n))

            rows.append(("1 Deployment, scale up", *timed(target, pid, n, create_one, n)))

            def scale_down() -> None:
                patch = b'{"spec":{"replicas":0}}'
                conn.request(
                    "PATCH",
                    APPS + "/one",
                    body=patch,
                    headers={**target.headers(), "Content-Type": "application/merge-patch+json"},
                )
                conn.getresponse().read()

            rows.append(("1 Deployment, scale to 0", *timed(target, pid, n, scale_down, 0)))

            def create_eight() -> None:
                for i in range(8):
                    loadgen.request(conn, target, "POST", APPS, deployment(f"d{i}", n // 8))

            per = n // 8 * 8
            rows.append(("8 Deployments at once", *timed(target, pid, per, create_eight, per)))
        finally:
            server.stop()
    print(f"\n{'':<28}{'pods/s':>10}{'server CPU ms/pod':>20}   ({n} pods)")
    for name, rate, cpu in rows:
        print(f"{name:<28}{rate:>10.0f}{cpu:>20.2f}")


if __name__ == "__main__":
    main()
