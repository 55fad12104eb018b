"""Does a write cost the same in a full cluster as in an empty one?  A scale probe.

    python benchmarks/clusterscale.py [--nodes 300] [--pods 1000] [--crds 200]

Starts this server (one worker) and, from one keep-alive client, creates in turn
namespaces, Nodes, Services (each selecting a tenth of the pods), NodePort Services, pods
bound to the Nodes, and CRDs in one group (each waited for until Established); it prints
each phase's mean latency per fifth of the phase, which stays flat unless something in the
server (a controller, an index) costs more as the cluster fills.  Then a fake fleet: every
Node writes a status heartbeat and renews its Lease each 10 s for 30 s, and the server's
CPU (with its writer process) over that time is printed.  Last, the server restarts on
the same data: time to ready and its memory.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen

from platform_api.testing.server import ApiServer

LEASES = "/apis/coordination.platform.io/v1/namespaces/platform-node-lease/leases"
CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions"
STRATEGIC = "application/strategic-merge-patch+json"
# The default cluster-IP range (a /24, as kube's) holds fewer Services than the probe makes.
SERVER = ("--workers", "1", "--service-cluster-ip-range", "10.96.0.0/16")


def tree(pid: int) -> list[int]:
    """The process and its descendants (the LMDB writer)."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def cpu_seconds(pid: int) -> float:
    total = 0
    for each in tree(pid):
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / 100.0


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def phase(label: str, count: int, step: Callable[[int], tuple[int, bytes]]) -> None:
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        code, body = step(i)
        latencies.append(time.perf_counter() - started)
        if code >= 300:
            raise SystemExit(f"{label} {i}: {code} {body[:300]!r}")
    fifth = max(1, count // 5)
    means = [
        1000 * sum(latencies[j : j + fifth]) / len(latencies[j : j + fifth])
        for j in range(0, fifth * 5, fifth)
    ]
    row = " ".join(f"{m:6.1f}" for m in means)
    print(f"{label:<34}{count:>6}  {row}  ms (mean per fifth)")


def stamp(micro: bool = False) -> str:
    now = time.time()
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    return f"{base}.{int(now % 1 * 1e6):06d}Z" if micro else base + "Z"


def fill(wire: loadgen.Wire, args: argparse.Namespace) -> None:
    def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        return wire.request("POST", path, orjson.dumps(body))

    phase("namespaces", 300, lambda i: post("/api/v1/namespaces", {"metadata": {"name": f"ns{i}"}}))
    phase("Nodes (and their Leases)", args.nodes, lambda i: node(wire, i))
    services = "/api/v1/namespaces/default/services"
    phase(
        "Services",
        250,
        lambda i: post(
            services,
            {"metadata": {"name": f"s{i}"}, "spec": {"ports": [{"port": 80}], "selector": _app(i)}},
        ),
    )
    phase(
        "NodePort Services",
        400,
        lambda i: post(
            services,
            {"metadata": {"name": f"np{i}"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}},
        ),
    )
    pods = "/api/v1/namespaces/default/pods"
    phase("pods", args.pods, lambda i: post(pods, pod(i, args.nodes)))
    phase("CRDs in one group, to Established", args.crds, lambda i: crd(wire, i))


def _app(i: int) -> dict[str, str]:
    return {"app": f"a{i % 10}"}


def pod(i: int, nodes: int) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx"}
    spec = {"nodeName": f"n{i % nodes}", "containers": [container]}
    return {"metadata": {"name": f"p{i}", "labels": _app(i)}, "spec": spec}


def node(wire: loadgen.Wire, i: int) -> tuple[int, bytes]:
    code, body = wire.request(
        "POST", "/api/v1/nodes", orjson.dumps({"metadata": {"name": f"n{i}"}})
    )
    if code >= 300:
        return code, body
    spec = {"holderIdentity": f"n{i}", "leaseDurationSeconds": 40, "renewTime": stamp(True)}
    return wire.request("POST", LEASES, orjson.dumps({"metadata": {"name": f"n{i}"}, "spec": spec}))


def crd(wire: loadgen.Wire, i: int) -> tuple[int, bytes]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    names = {"plural": f"things{i}", "kind": f"Thing{i}", "shortNames": [f"t{i}"]}
    body = {
        "metadata": {"name": f"things{i}.scale.example.com"},
        "spec": {"group": "scale.example.com", "scope": "Namespaced", "names": names},
    }
    body["spec"]["versions"] = [version]
    code, answer = wire.request("POST", CRDS, orjson.dumps(body))
    while code < 300 and b'"Established","status":"True"' not in answer:
        code, answer = wire.request("GET", f"{CRDS}/things{i}.scale.example.com")
    return code, answer


def fleet(wire: loadgen.Wire, nodes: int, pid: int, rounds: int = 3) -> None:
    """Every Node's status heartbeat and Lease renewal each 10 s: a kubelet's steady load."""
    before, started = cpu_seconds(pid), time.perf_counter()
    for _ in range(rounds):
        began = time.perf_counter()
        for i in range(nodes):
            now = stamp()
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady"}
            ready.update(lastHeartbeatTime=now, lastTransitionTime=now, message="ok")
            patch = orjson.dumps({"status": {"conditions": [ready]}})
            wire.request("PATCH", f"/api/v1/nodes/n{i}/status", patch, STRATEGIC)
            renew = orjson.dumps({"spec": {"renewTime": stamp(True)}})
            wire.request("PATCH", f"{LEASES}/n{i}", renew, loadgen.MERGE_PATCH)
        time.sleep(max(0.0, 10 - (time.perf_counter() - began)))
    spent, took = cpu_seconds(pid) - before, time.perf_counter() - started
    writes = 2 * nodes * rounds / took
    print(
        f"fleet of {nodes} Nodes: {writes:.0f} writes/s, server CPU {100 * spent / took:.1f}% "
        f"of a core ({1000 * spent / (2 * nodes * rounds):.2f} ms a write)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--crds", type=int, default=200)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="clusterscale-"))
    server = ApiServer.start(data, *SERVER)
    try:
        target = loadgen.from_kubeconfig(str(server.kubeconfig))
        wire = target.wire()
        fill(wire, args)
        assert server.process is not None
        fleet(wire, args.nodes, server.process.pid)
        server.stop()
        started = time.perf_counter()
        server = ApiServer.start(data, *SERVER)
        ready = time.perf_counter() - started
        time.sleep(5)  # the controllers load their indexes once leading
        assert server.process is not None
        print(
            f"restart on that data: ready in {ready:.2f} s, RSS {rss_mb(server.process.pid):.0f} MB"
        )
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
