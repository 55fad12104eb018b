"""TokenRequest cost: the server signing with its own key against the sample external
signer (``--service-account-signing-endpoint``, ``python -m webhooks.jwtsigner``), and
what authenticating with the token costs once issued.

    python benchmarks/signerbench.py [--requests 400] [--clients 4]

Prints, side by side from one run, the sequential TokenRequest median and the rate with
``--clients`` threads on their own connections, and the rate of GETs made with the issued
token (the verifier's keys come from the signer, refreshed on its hint).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen

from platform_api.testing.server import ApiServer

ROOT = Path(__file__).parent.parent
QUIET = "--controllers=*,-root-ca-certificate-publisher-controller"
ACCOUNT = "/api/v1/namespaces/default/serviceaccounts"
TOKEN_REQUEST = {
    "apiVersion": "authentication.platform.io/v1",
    "kind": "TokenRequest",
    "spec": {"expirationSeconds": 3600},
}


def signer(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    socket = str(root / "signer.sock")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "webhooks.jwtsigner",
            "--socket",
            socket,
            "--key-file",
            str(root / "keys.pem"),
            "--generate-key",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.readline()  # listening
    return process, socket


def _in_threads(
    target: loadgen.Target, clients: int, count: int, work: Callable[[Any], object]
) -> float:
    """Requests per second of ``count`` calls of ``work(conn)`` from each of ``clients``
    threads, each on its own connection."""
    done = threading.Barrier(clients + 1)

    def run() -> None:
        conn = target.connect()
        done.wait()
        for _ in range(count):
            work(conn)
        done.wait()

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    done.wait()
    started = time.perf_counter()
    done.wait()
    elapsed = time.perf_counter() - started
    for t in threads:
        t.join()
    return clients * count / elapsed


def measure(args: list[str], requests: int, clients: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="signerbench-") as tmp:
        server = ApiServer.start(Path(tmp) / "data", "--workers", "1", QUIET, *args, timeout=90)
        try:
            admin = loadgen.from_kubeconfig(str(server.kubeconfig))
            conn = admin.connect()
            code, _ = loadgen.request(conn, admin, "POST", ACCOUNT, {"metadata": {"name": "b"}})
            assert code == 201

            def issue(c: Any) -> bytes:
                code, body = loadgen.request(c, admin, "POST", f"{ACCOUNT}/b/token", TOKEN_REQUEST)
                assert code == 201, body
                return body

            samples = []
            for _ in range(requests // 4):
                started = time.perf_counter()
                token = issue(conn)
                samples.append((time.perf_counter() - started) * 1000)
            rate = _in_threads(admin, clients, requests // clients, issue)
            bearer = json.loads(token)["status"]["token"]
            robot = dataclasses.replace(admin, cert=None, key=None, token=bearer)

            def get(c: Any) -> None:
                code, _ = loadgen.request(c, robot, "GET", ACCOUNT + "/b")
                assert code == 200

            gets = _in_threads(robot, clients, requests // clients, get)
            return {"p50": statistics.median(samples), "rate": rate, "gets": gets}
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    local = measure([], args.requests, args.clients)
    with tempfile.TemporaryDirectory(prefix="signerbench-signer-") as tmp:
        process, socket = signer(Path(tmp))
        try:
            external = measure(
                [f"--service-account-signing-endpoint={socket}"], args.requests, args.clients
            )
        finally:
            process.terminate()
            process.wait()
    print(f"\n{'signer':<22}{'TokenRequest p50 ms':>20}{'TokenRequests/s':>17}{'GETs/s':>10}")
    for name, row in (("local key (RSA 2048)", local), ("external (ECDSA P-256)", external)):
        print(f"{name:<22}{row['p50']:>20.2f}{row['rate']:>17.0f}{row['gets']:>10.0f}")


if __name__ == "__main__":
    main()
