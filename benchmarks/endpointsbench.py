"""What the endpoint controllers cost a busy server: pods created and made Ready, with and
without a Service selecting them.

    python benchmarks/endpointsbench.py [--pods 3000]

Starts this server twice (one worker).  Each time: a Node, then 8 clients create
``--pods`` pods and write each one's status as a kubelet would (Running, an IP, Ready);
the second time a Service selects all of them first, so the endpoints and endpointslice
controllers follow every change.  Prints pod creates/s and status writes/s for both, and
how long after the last status write the EndpointSlices held every pod.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
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

NAMESPACE = "endpoints-bench"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
SLICES = f"/apis/discovery.platform.io/v1/namespaces/{NAMESPACE}/endpointslices"
CLIENTS = 8


def pod(name: str) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 80}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [container]},
    }


def report_ready(target: loadgen.Target, names: list[str], client: int, out: Any) -> None:
    wire = target.wire()
    wire.request("GET", "/version")
    start, errors = time.perf_counter(), 0
    for i, name in enumerate(names):
        ip = f"10.{client}.{i // 250}.{i % 250 + 1}"
        status = {
            "phase": "Running",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        body = orjson.dumps({"status": status})
        code, _ = wire.request("PATCH", f"{PODS}/{name}/status", body, loadgen.MERGE_PATCH)
        errors += code != 200
    out.put((time.perf_counter() - start, len(names), errors))


def run(pods: int, with_service: bool) -> dict[str, float]:
    data = Path(tempfile.mkdtemp(prefix="endpointsbench-"))
    server = ApiServer.start(data, "--workers", "1")
    try:
        target = loadgen.from_kubeconfig(str(server.kubeconfig))
        conn = target.connect()
        for path, body in (
            ("/api/v1/namespaces", {"kind": "Namespace", "metadata": {"name": NAMESPACE}}),
            ("/api/v1/nodes", {"kind": "Node", "metadata": {"name": "n1"}}),
        ):
            loadgen.request(conn, target, "POST", path, {"apiVersion": "v1", **body})
        if with_service:
            spec = {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}
            body = {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web"},
                "spec": spec,
            }
            loadgen.request(conn, target, "POST", f"/api/v1/namespaces/{NAMESPACE}/services", body)
        per = pods // CLIENTS
        names = [[f"p-{c}-{i}" for i in range(per)] for c in range(CLIENTS)]
        load = loadgen.Workload(base=PODS, make=pod)
        out: dict[str, float] = {}
        out["pod creates /s"] = loadgen.run_parallel(
            target, "create", CLIENTS, per, names, load
        ).rate
        queue: Any = mp.Queue()
        procs = [
            mp.Process(target=report_ready, args=(target, names[c], c, queue))
            for c in range(CLIENTS)
        ]
        started = time.perf_counter()
        for p in procs:
            p.start()
        results = [queue.get() for _ in procs]
        for p in procs:
            p.join()
        finished = time.perf_counter()
        out["status writes /s"] = sum(r[1] for r in results) / (finished - started)
        if with_service:
            out["slices complete after s"] = settle(target, per * CLIENTS) - finished
        return out
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


def settle(target: loadgen.Target, wanted: int, timeout: float = 60.0) -> float:
    conn, deadline = target.connect(), time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        _, body = loadgen.request(conn, target, "GET", SLICES)
        items = orjson.loads(body)["items"]
        if sum(len(i.get("endpoints") or []) for i in items) == wanted:
            return time.perf_counter()
        time.sleep(0.05)
    raise SystemExit("the EndpointSlices never held every pod")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=3000)
    args = parser.parse_args()
    without, with_service = run(args.pods, False), run(args.pods, True)
    print(f"\n{'':<28}{'no Service':>12}{'a Service':>12}   ({args.pods} pods, 8 clients)")
    for row in ("pod creates /s", "status writes /s"):
        print(f"{row:<28}{without[row]:>12.0f}{with_service[row]:>12.0f}")
    print(
        f"{'slices complete after s':<28}{'':>12}{with_service['slices complete after s']:>12.2f}"
    )


if __name__ == "__main__":
    main()
