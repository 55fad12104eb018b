"""GET and LIST in each wire format, side by side: req/s and server CPU per request.

    python benchmarks/wirebench.py                      # starts its own server (CBOR on)
    python benchmarks/wirebench.py --kubeconfig K --pid P [--no-cbor]

1000 ~200-byte ConfigMaps; N client processes on keep-alive connections GET single
objects, then LIST all 1000, asking for JSON, Protobuf (application/vnd.kubernetes.protobuf,
as stock clients do) and CBOR in turn, each twice so every format sees the same machine.
Server CPU is the user+system time of the server process (and its children) over the
run, from /proc, divided by the requests served.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from benchmarks.loadgen import (
    BASE,
    NAMESPACE,
    Target,
    Workload,
    configmap,
    from_kubeconfig,
    request,
    run_parallel,
)
from platform_api.testing import ApiServer

FORMATS = {
    "json": "application/json",
    "protobuf": "application/vnd.kubernetes.protobuf",
    "cbor": "application/cbor",
}
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and every process below it."""
    total = 0.0
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    wanted = {pid}
    changed = True
    while changed:
        changed = False
        for child, (parent, _) in stats.items():
            if parent in wanted and child not in wanted:
                wanted.add(child)
                changed = True
    for member in wanted:
        total += stats.get(member, (0, 0))[1] / TICK
    return total


def measure(
    target: Target, pid: int, op: str, accept: str, clients: int, per: int, names: list[list[str]]
) -> tuple[float, float, int]:
    """(req/s, server CPU ms per request, errors) of one run."""
    before = cpu_seconds(pid)
    run = run_parallel(target, op, clients, per, names, Workload(accept=accept))
    rate, errors = run.rate, run.errors
    used = cpu_seconds(pid) - before
    return rate, used * 1000 / (clients * per), errors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig")
    parser.add_argument("--pid", type=int, help="the server's process (with --kubeconfig)")
    parser.add_argument("--no-cbor", action="store_true", help="the server does not speak CBOR")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--gets", type=int, default=6000, help="GET requests per run")
    parser.add_argument("--lists", type=int, default=160, help="LIST requests per run")
    args = parser.parse_args()
    server = None
    if args.kubeconfig:
        target, pid = from_kubeconfig(args.kubeconfig), args.pid
    else:
        data = Path(tempfile.mkdtemp(prefix="wirebench-")) / "data"
        server = ApiServer.start(data, "--feature-gates=CBORServingAndStorage=true")
        assert server.process is not None
        target, pid = from_kubeconfig(str(server.kubeconfig)), server.process.pid
    formats = {k: v for k, v in FORMATS.items() if not (args.no_cbor and k == "cbor")}
    try:
        run(target, pid, formats, args)
    finally:
        if server is not None:
            server.stop()


def run(target: Target, pid: int, formats: dict[str, str], args: argparse.Namespace) -> None:
    conn = target.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    request(conn, target, "POST", "/api/v1/namespaces", namespace)
    clients = args.clients
    per = args.objects // clients
    names = [[f"cm-{c}-{i}" for i in range(per)] for c in range(clients)]
    for group in names:
        for name in group:
            request(conn, target, "POST", BASE, configmap(name))
    rows = []
    for op, count in (("get", args.gets), ("list", args.lists)):
        per_client = max(1, count // clients)
        for _round in range(2):
            for fmt, accept in formats.items():
                rate, cpu, errors = measure(target, pid, op, accept, clients, per_client, names)
                rows.append((f"{op} {fmt}", rate, cpu, errors))
    print(f"\n{'request':<16}{'req/s':>10}{'CPU ms/req':>12}{'errors':>8}   ({clients} clients)")
    for name, rate, cpu, errors in rows:
        print(f"{name:<16}{rate:>10.0f}{cpu:>12.3f}{errors:>8}")
    request(conn, target, "DELETE", f"/api/v1/namespaces/{NAMESPACE}")


if __name__ == "__main__":
    main()
