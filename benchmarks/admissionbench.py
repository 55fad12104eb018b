"""What an admission webhook adds to a create: latency and throughput, side by side.

    python benchmarks/admissionbench.py          # starts a server and the sample webhook

ConfigMap creates in two namespaces of one server: one no webhook selects, one selected
by a validating webhook (the sample service, ``twistd platform-admission-webhook``, on
loopback with TLS).  Sequential creates give the added latency (median, p99); N client
processes give throughput.  Each side runs twice, alternating, on the same machine.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.loadgen import Target, Workload, configmap, from_kubeconfig, request, run_parallel
from benchmarks.wirebench import cpu_seconds
from platform_api.apiserver import pki
from platform_api.testing import ApiServer

ROOT = Path(__file__).resolve().parents[1]
PLAIN, HOOKED = "bench-plain", "bench-hooked"


def start_webhook(root: Path, certs: pki.Paths) -> tuple[subprocess.Popen[bytes], int]:
    log = root / "hook.log"
    twistd = Path(sys.executable).parent / "twistd"
    rules = root / "rules.yaml"
    rules.write_text("rules:\n- kinds: [ConfigMap]\n  requireLabels: []\n")
    proc = subprocess.Popen(
        [
            *(str(twistd), "--pidfile=", "-n", "--logfile", str(log)),
            *("platform-admission-webhook", "--port", "0", "--rules-file", str(rules)),
            *("--tls-cert-file", certs.serving_cert, "--tls-private-key-file", certs.serving_key),
        ],
        cwd=root,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "serving on https://" in text:
            return proc, int(text.split("serving on https://", 1)[1].split(":")[1].split()[0])
        time.sleep(0.05)
    raise SystemExit("the webhook did not start")


def setup(target: Target, ca: str, port: int) -> None:
    conn = target.connect()
    for name in (PLAIN, HOOKED):
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        ns["metadata"]["labels"] = {"bench": name}
        request(conn, target, "POST", "/api/v1/namespaces", ns)
    hook = {
        "name": "bench.example.com",
        "clientConfig": {"url": f"https://127.0.0.1:{port}/validate", "caBundle": ca},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"bench": HOOKED}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    config = {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bench"},
        "webhooks": [hook],
    }
    path = "/apis/admissionregistration.platform.io/v1/validatingwebhookconfigurations"
    status, body = request(conn, target, "POST", path, config)
    if status != 201:
        raise SystemExit(f"webhook configuration: {status} {body[:300]!r}")
    time.sleep(0.5)


def sequential(target: Target, namespace: str, prefix: str, count: int) -> list[float]:
    conn = target.connect()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    request(conn, target, "GET", "/version")
    out = []
    for i in range(count):
        start = time.perf_counter()
        status, body = request(conn, target, "POST", base, configmap(f"{prefix}-{i}"))
        out.append(time.perf_counter() - start)
        if status != 201:
            raise SystemExit(f"create: {status} {body[:300]!r}")
    return out


def p99(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sequential", type=int, default=500)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--objects", type=int, default=2000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="admissionbench-"))
    server = ApiServer.start(root / "server")
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    hook, port = start_webhook(root, certs)
    try:
        target = from_kubeconfig(str(server.kubeconfig))
        setup(target, base64.b64encode(Path(certs.ca_cert).read_bytes()).decode(), port)
        sequential(target, PLAIN, "warm", 200)
        sequential(target, HOOKED, "warm", 200)
        latency: dict[str, list[float]] = {PLAIN: [], HOOKED: []}
        rates: dict[str, list[float]] = {PLAIN: [], HOOKED: []}
        cpu: dict[str, list[float]] = {PLAIN: [0.0, 0.0], HOOKED: [0.0, 0.0]}
        per = args.objects // args.clients
        for sitting in range(2):
            for ns in (PLAIN, HOOKED):
                latency[ns] += sequential(target, ns, f"s{sitting}", args.sequential)
                load = Workload(base=f"/api/v1/namespaces/{ns}/configmaps")
                names = [[f"p{sitting}-{c}-{i}" for i in range(per)] for c in range(args.clients)]
                before = cpu_seconds(server.process.pid), cpu_seconds(hook.pid)
                rate, errors = run_parallel(target, "create", args.clients, per, names, load)
                cpu[ns][0] += cpu_seconds(server.process.pid) - before[0]
                cpu[ns][1] += cpu_seconds(hook.pid) - before[1]
                if errors:
                    raise SystemExit(f"{ns}: {errors} failed creates")
                rates[ns].append(rate)
    finally:
        hook.terminate()
        server.stop()
    print(
        f"\n{'create':<28}{'median ms':>10}{'p99 ms':>10}{'req/s, ' + str(args.clients) + ' clients':>26}"
    )
    for ns, label in ((PLAIN, "no webhook"), (HOOKED, "one validating webhook")):
        values = latency[ns]
        print(
            f"{label:<28}{statistics.median(values) * 1000:>10.2f}{p99(values) * 1000:>10.2f}"
            f"{' / '.join(f'{r:.0f}' for r in rates[ns]):>26}"
        )
    done = 2 * per * args.clients
    for ns, label in ((PLAIN, "no webhook"), (HOOKED, "one validating webhook")):
        server_ms, hook_ms = (c / done * 1000 for c in cpu[ns])
        print(f"CPU per create, {label}: server {server_ms:.2f} ms, webhook {hook_ms:.2f} ms")
    added = statistics.median(latency[HOOKED]) - statistics.median(latency[PLAIN])
    print(f"added by the webhook (median): {added * 1000:.2f} ms")


if __name__ == "__main__":
    main()
