"""Ready-after-start time and idle memory of ``twistd platform-apiserver``.

    python benchmarks/startup.py [--workers 2]   # a fresh data dir; prints a table

"Ready" is the first 200 from /readyz; idle memory (the server's, its workers' and its
writer process's) is read from /proc after the server has served that and sat idle for
two seconds.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory_mb(pid: int) -> tuple[float, float]:
    """The resident and proportional memory of ``pid`` and its descendants (workers, the
    LMDB writer process).  Forked workers share their supervisor's pages: RSS counts a
    shared page in every process, PSS splits it between them."""
    rss = pss = 0.0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        children = f.read().split()
    for child in children:
        child_rss, child_pss = memory_mb(int(child))
        rss, pss = rss + child_rss, pss + child_pss
    return rss, pss


def measure(
    twistd: str, fresh: bool, data_dir: str, workers: int = 1
) -> tuple[float, float, float]:
    port = free_port()
    cmd = [
        twistd,
        "--pidfile=",
        "-n",
        "--logfile",
        os.devnull,
        "platform-apiserver",
        "--data-dir",
        data_dir,
        "--secure-port",
        str(port),
        "--bind-address",
        "127.0.0.1",
        "--workers",
        str(workers),
    ]
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    try:
        while True:
            try:
                with urllib.request.urlopen(
                    f"https://127.0.0.1:{port}/readyz", context=ctx, timeout=1
                ) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.01)
            if proc.poll() is not None:
                raise SystemExit("server exited")
        ready = time.perf_counter() - start
        time.sleep(2)
        return (ready, *memory_mb(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="as scripts/run: the cores")
    args = parser.parse_args()
    twistd = os.path.join(os.path.dirname(sys.executable), "twistd")
    print(f"{'start':<22}{'ready (s)':>10}{'idle RSS (MB)':>15}{'idle PSS (MB)':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            data = os.path.join(tmp, "data")
            label = "first (creates PKI)" if run == 0 else "restart"
            ready, rss, pss = measure(twistd, run == 0, data, args.workers)
            print(f"{label:<22}{ready:>10.2f}{rss:>15.1f}{pss:>15.1f}")


if __name__ == "__main__":
    main()
