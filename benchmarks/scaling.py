"""Every configuration side by side, in one run: the issue-13 table.

    python benchmarks/scaling.py [--reference KUBECONFIG] [--objects 1000] [--rounds 3]

Starts this server once per configuration (LMDB and etcd, each with 1 and 2 workers; a
worker on etcd is a replica with its own watch cache), runs loadgen's 8-client
create/get/update/list and watchbench's 1000-creates-to-100-watchers against each,
then against --reference (a kube-apiserver, e.g. the one
``../shared/tools/reference-apiserver start`` prints), and prints one table with each
column's ratio to the reference.  Also measures how long a write through one
connection takes to reach watchers on other connections (with workers, other processes),
and the machine's CPU per create and per update apart from the clients' own: the
server's with its database (the writer processes; kube-apiserver's etcd), which says
whether a configuration is bound by its CPU or by the cores it can use.  For this
server, the same CPU split by process (proctree.py): the serving processes, the LMDB
writers, etcd, and how the scheduler ran the serving processes (how often each request
put one on a core, how long it waited runnable for one, how often it was preempted).

With ``--rounds N`` every configuration and the reference run N times, interleaved (one
of each per round), and each cell is the median: on a machine whose speed drifts, ratios
of runs minutes apart are otherwise off by a third.  A cell's ratio is the median of its
rounds' ratios (each to the reference run of the same round), so drift between rounds
cancels out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen
import proctree
import watchbench

from platform_api.testing.server import ApiServer
from tests.storage.etcd_server import start_etcd

CONFIGS = {
    "lmdb-1": ["--workers", "1"],
    "lmdb-2": ["--workers", "2"],
    # Two workers on etcd are two replicas behind one port, each with its own watch cache.
    "etcd-1": ["--storage-backend", "etcd3", "--workers", "1"],
    "etcd-2": ["--storage-backend", "etcd3", "--workers", "2"],
}
QUIET = "--controllers=*,-root-ca-certificate-publisher-controller"


def measure(
    target: loadgen.Target,
    objects: int,
    namespace: str,
    clients: int = 8,
    tree: Callable[[], dict[int, str]] | None = None,
) -> dict[str, float]:
    """One run in a fresh ``namespace`` (a reference without a namespace controller
    never finishes deleting the last one); ``tree`` names the server's processes by role
    (proctree.py) where they are on this machine."""
    load = loadgen.Workload(base=f"/api/v1/namespaces/{namespace}/configmaps")
    conn = target.connect()
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    loadgen.request(conn, target, "POST", "/api/v1/namespaces", body)
    per = objects // clients
    names = [[f"cm-{c}-{i}" for i in range(per)] for c in range(clients)]
    out: dict[str, float] = {}
    probe = None
    if tree is not None:
        found = tree()

        def probe() -> dict[int, tuple[str, proctree.Usage]]:
            return proctree.snapshot(found)

    create = loadgen.run_parallel(target, "create", clients, per, names, load, probe)
    out["create /s"] = create.rate
    out["get /s"] = loadgen.run_parallel(target, "get", clients, per * 3, names, load).rate
    update = loadgen.run_parallel(target, "update", clients, per, names, load, probe)
    out["update /s"] = update.rate
    out["server CPU ms per create"] = create.server_cpu_ms
    out["server CPU ms per update"] = update.server_cpu_ms
    for verb, run in (("create", create), ("update", update)):
        if probe is not None:
            spent = proctree.per_request(*run.probed, per * clients)
            out.update({f"{row} per {verb}": value for row, value in spent.items()})
    out["list /s"] = loadgen.run_parallel(target, "list", clients, 25, names, load).rate
    cut_before = len(watchbench.CUT_OFF)
    _, seen = asyncio.run(watchbench.fan_out(target, namespace, 100, 1000))
    out["1000 creates to 100 watchers s"] = seen
    out["watches the server cut (resumed)"] = len(watchbench.CUT_OFF) - cut_before
    p50, p99 = propagation(target, namespace)
    out["write-to-watcher p50 ms"], out["write-to-watcher p99 ms"] = p50, p99
    loadgen.request(target.connect(), target, "DELETE", f"/api/v1/namespaces/{namespace}")
    return out


def propagation(target: loadgen.Target, namespace: str, writes: int = 200) -> tuple[float, float]:
    """Creates one at a time on one connection; 4 watchers on their own connections note
    when each arrives. Lag = arrival - the create's response."""
    revision = watchbench.current_revision(target, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={revision}"
    arrivals: list[dict[str, float]] = [{} for _ in range(4)]

    def watch(into: dict[str, float]) -> None:
        conn = target.connect()
        conn.request("GET", path, headers=target.headers())
        response = conn.getresponse()
        while len(into) < writes:
            line = response.readline()
            if not line:
                return
            if not line.strip():
                continue
            event = json.loads(line)
            into[event["object"]["metadata"]["name"]] = time.perf_counter()

    threads = [threading.Thread(target=watch, args=(a,), daemon=True) for a in arrivals]
    for t in threads:
        t.start()
    time.sleep(0.5)
    conn = target.connect()
    done: dict[str, float] = {}
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(writes):
        name = f"lag-{i}"
        loadgen.request(conn, target, "POST", base, loadgen.configmap(name))
        done[name] = time.perf_counter()
        time.sleep(0.002)
    for t in threads:
        t.join(timeout=10)
    lags = [
        max(0.0, (seen[name] - done[name]) * 1000)
        for seen in arrivals
        for name in done
        if name in seen
    ]
    lags.sort()
    return statistics.median(lags), lags[int(len(lags) * 0.99) - 1]


@contextlib.contextmanager
def started(name: str, args: list[str]) -> Iterator[tuple[ApiServer, list[int]]]:
    """This server with ``args`` in a fresh directory, on an etcd of its own when ``args``
    name etcd3 (with fsync, as kube's has); yields it and that etcd's pid, if any."""
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
        etcd = None
        if "etcd3" in args:
            (Path(tmp) / "etcd").mkdir()
            etcd = start_etcd(str(Path(tmp) / "etcd"))
            args = [*args, "--etcd-servers", etcd.endpoint]
        server = ApiServer.start(Path(tmp) / "data", *args, timeout=60)
        try:
            assert server.process is not None
            yield server, [etcd.process.pid] if etcd and etcd.process else []
        finally:
            server.stop()
            if etcd is not None:
                etcd.stop()


def run_config(name: str, args: list[str], objects: int, namespace: str) -> dict[str, float]:
    with started(f"scaling-{name}", [*args, QUIET]) as (server, others):
        assert server.process is not None
        root = server.process.pid
        target = loadgen.from_kubeconfig(str(server.kubeconfig))
        return measure(target, objects, namespace, tree=lambda: proctree.roles(root, others))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", help="kubeconfig of a kube-apiserver to compare with")
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--configs", default=",".join(CONFIGS), help="which configurations")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved runs; medians")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {}
    for round_ in range(args.rounds):
        namespace = f"{loadgen.NAMESPACE}-{round_}"
        for name in args.configs.split(","):
            result = run_config(name, CONFIGS[name], args.objects, namespace)
            runs.setdefault(name, []).append(result)
            print(name, result, flush=True)  # a later failure keeps what was measured
        if args.reference:
            kube = measure(loadgen.from_kubeconfig(args.reference), args.objects, namespace)
            print("kube", kube, flush=True)
            runs.setdefault("kube", []).append(kube)
    print_table(runs)


def ratio(ours: list[dict[str, float]], kube: list[dict[str, float]], row: str) -> float | None:
    """The median of each round's ratio to the reference's run of the same round."""
    pairs = [(o[row], k[row]) for o, k in zip(ours, kube, strict=False) if k.get(row)]
    return statistics.median(o / k for o, k in pairs) if pairs else None


def print_table(runs: dict[str, list[dict[str, float]]]) -> None:
    columns = list(runs)
    rows = list(dict.fromkeys(row for column in columns for row in runs[column][0]))
    print(f"\n{'measure':<34}" + "".join(f"{c:>16}" for c in columns))
    for row in rows:
        cells = []
        for column in columns:
            value = statistics.median(run.get(row, math.nan) for run in runs[column])
            if math.isnan(value):  # a process this server does not have (or kube's)
                cells.append(f"{'-':>16}")
                continue
            cell = f"{value:.2f}" if value < 100 else f"{value:.0f}"
            relative = ratio(runs[column], runs["kube"], row) if "kube" in runs else None
            if relative is not None and column != "kube":
                cell += f" ({relative:.2f}x)"
            cells.append(f"{cell:>16}")
        print(f"{row:<34}" + "".join(cells))


if __name__ == "__main__":
    main()
