"""Start-to-ready time of the ``platform_apiserver`` pytest fixture, and where it goes.

    python benchmarks/fixturebench.py              # 5 starts, one at a time
    python benchmarks/fixturebench.py --parallel 2 # 2 at once, as under pytest -n 2

"ready" is what the fixture costs a session: from spawning ``twistd`` to the server's
"Ready:" log line (fresh data dir and PKI, bootstrap done). "in server" is the server's own
count of that from its service's construction; "first ns" the first namespace created after
ready; "stop" SIGTERM to exit. The breakdown below the table splits the median ready time
into interpreter start, module imports (both measured in fresh interpreters) and the rest.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from platform_api.testing import ApiServer

READY = re.compile(r"Ready: ([0-9.]+)s after start")
SERVER_MODULES = (
    "twisted.scripts.twistd, platform_api.apiserver.tap, platform_api.apiserver.service"
)


def one_start(root: Path) -> tuple[float, float, float, float]:
    """(ready, in-server, first namespace, stop) in seconds for one fresh server."""
    began = time.perf_counter()
    server = ApiServer.start(root)
    ready = time.perf_counter() - began
    try:
        began = time.perf_counter()
        server.create_namespace("bench")
        first_ns = time.perf_counter() - began
    finally:
        began = time.perf_counter()
        server.stop()
        stopped = time.perf_counter() - began
    assert server.log is not None
    match = READY.search(server.log.read_text())
    in_server = float(match.group(1)) if match else float("nan")
    return ready, in_server, first_ns, stopped


def fresh_interpreter(code: str, runs: int = 3) -> float:
    """Median wall time of ``python -c code`` (the child prints nothing)."""
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=1, help="servers started at once")
    args = parser.parse_args()
    print(f"{'run':<6}{'ready (s)':>11}{'in server (s)':>15}{'first ns (ms)':>15}{'stop (s)':>10}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.parallel) as pool:
        for run in range(args.runs):
            roots = [Path(tmp) / f"{run}-{i}" for i in range(args.parallel)]
            for i, row in enumerate(pool.map(one_start, roots)):
                rows.append(row)
                label = f"{run}" if args.parallel == 1 else f"{run}.{i}"
                ready, in_server, first_ns, stopped = row
                print(
                    f"{label:<6}{ready:>11.3f}{in_server:>15.2f}{first_ns * 1000:>15.1f}{stopped:>10.3f}"
                )
    ready = statistics.median(r[0] for r in rows)
    in_server = statistics.median(r[1] for r in rows)
    bare = fresh_interpreter("pass")
    imports = fresh_interpreter(f"import {SERVER_MODULES}") - bare
    rest = ready - bare - imports - in_server
    print(f"\nmedian ready {ready:.3f} s, worst {max(r[0] for r in rows):.3f} s; of the median:")
    print(f"  interpreter start        {bare:.3f} s")
    print(f"  imports (twistd, server) {imports:.3f} s")
    print(f"  service start to ready   {in_server:.3f} s  (PKI, stores, listen, bootstrap)")
    print(f"  the rest                 {rest:.3f} s  (twistd setup, plugin scan, log polling)")


if __name__ == "__main__":
    main()
