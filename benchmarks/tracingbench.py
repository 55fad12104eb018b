"""Tracing cost: the same server without ``--tracing-config-file``, with it and no sampling,
and with every request sampled and exported to a real OTLP/gRPC receiver.

    python benchmarks/tracingbench.py [--objects 1000] [--clients 8]

Prints loadgen's 8-client create and get rates and the sequential GET median for each
(also with 1% sampled), side by side, from one run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen

from platform_api.testing.server import ApiServer

ROOT = Path(__file__).parent.parent
QUIET = "--controllers=*,-root-ca-certificate-publisher-controller"
# (row, samplingRatePerMillion): no flag, the flag without sampling, 1%, every request.
ROWS = (("off", None), ("rate 0", 0), ("1%", 10_000), ("every request", 1_000_000))


def receiver(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port_file = root / "otlp.port"
    sink = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.otlpsink", str(root / "spans.jsonl"), str(port_file)],
        cwd=ROOT,
    )
    while not (port_file.exists() and port_file.read_text()):
        time.sleep(0.05)
    return sink, int(port_file.read_text())


def measure(args: list[str], objects: int, clients: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="tracingbench-") as tmp:
        server = ApiServer.start(Path(tmp) / "data", "--workers", "1", QUIET, *args, timeout=60)
        try:
            target = loadgen.from_kubeconfig(str(server.kubeconfig))
            conn = target.connect()
            namespace = {"apiVersion": "v1", "kind": "Namespace"}
            namespace["metadata"] = {"name": loadgen.NAMESPACE}  # type: ignore[assignment]
            loadgen.request(conn, target, "POST", "/api/v1/namespaces", namespace)
            per = objects // clients
            names = [[f"cm-{c}-{i}" for i in range(per)] for c in range(clients)]
            create = loadgen.run_parallel(target, "create", clients, per, names)
            p50, _ = loadgen.sequential_get(target, names[0][0], 500)
            get = loadgen.run_parallel(target, "get", clients, per * 3, names)
            assert create.errors == get.errors == 0
            return {"create": create.rate, "get": get.rate, "p50": p50}
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tracingbench-") as tmp:
        root = Path(tmp)
        sink, port = receiver(root)
        try:
            rows = {}
            for name, rate in ROWS:
                args = []
                if rate is not None:
                    config = root / f"tracing-{rate}.yaml"
                    config.write_text(
                        f"endpoint: 127.0.0.1:{port}\nsamplingRatePerMillion: {rate}\n"
                    )
                    args = [f"--tracing-config-file={config}"]
                rows[name] = measure(args, options.objects, options.clients)
            spans = sum(1 for _ in (root / "spans.jsonl").open("rb"))
        finally:
            sink.terminate()
            sink.wait()
    print(f"\n{'tracing':<16}{'create/s':>10}{'get/s':>10}{'seq GET p50':>14}")
    for name, row in rows.items():
        print(f"{name:<16}{row['create']:>10.0f}{row['get']:>10.0f}{row['p50']:>12.2f}ms")
    print(f"spans received: {spans}")


if __name__ == "__main__":
    main()
