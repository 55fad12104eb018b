"""What admission adds to a create: a webhook and a CEL policy, side by side.

    python benchmarks/admissionbench.py          # starts a server and the sample webhook

ConfigMap creates in three namespaces of one server: one nothing selects, one selected by
a validating webhook (the sample service, ``twistd platform-admission-webhook``, on
loopback with TLS), one by a ValidatingAdmissionPolicy of five expressions.  Sequential
creates give the added latency (median, p99); N client processes give throughput and the
server's CPU per create.  Each side runs twice, alternating, on the same machine.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.loadgen import (
    Target,
    Workload,
    configmap,
    from_kubeconfig,
    request,
    run_parallel,
    scratch_dir,
)
from benchmarks.wirebench import cpu_seconds
from platform_api.apiserver import pki
from platform_api.testing import ApiServer

ROOT = Path(__file__).resolve().parents[1]
PLAIN, HOOKED, POLICED = "bench-plain", "bench-hooked", "bench-policed"
LABELS = {
    PLAIN: "nothing",
    HOOKED: "one validating webhook",
    POLICED: "a policy, 5 expressions",
}
# Five typical checks of a ConfigMap, as a ValidatingAdmissionPolicy.
EXPRESSIONS = [
    "size(object.data) <= 16",
    "object.metadata.name.size() < 64",
    "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)",
    "object.data.all(k, k.size() < 32)",
    "request.operation == 'CREATE' || oldObject != null",
]


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
    for name in (PLAIN, HOOKED, POLICED):
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
    api = "/apis/admissionregistration.platform.io/v1"
    for plural, obj in (
        ("validatingwebhookconfigurations", config),
        ("validatingadmissionpolicies", policy()),
        ("validatingadmissionpolicybindings", binding()),
    ):
        status, body = request(conn, target, "POST", f"{api}/{plural}", obj)
        if status != 201:
            raise SystemExit(f"{plural}: {status} {body[:300]!r}")
    time.sleep(0.5)


def policy() -> dict[str, Any]:
    rules = [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"]}
        | {"resources": ["configmaps"]}
    ]
    return {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bench"},
        "spec": {
            "matchConstraints": {
                "resourceRules": rules,
                "namespaceSelector": {"matchLabels": {"bench": POLICED}},
            },
            "validations": [{"expression": e} for e in EXPRESSIONS],
        },
    }


def binding() -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "bench"},
        "spec": {"policyName": "bench", "validationActions": ["Deny"]},
    }


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
    root = Path(scratch_dir("admissionbench-"))
    server = ApiServer.start(root / "server")
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    hook, port = start_webhook(root, certs)
    try:
        target = from_kubeconfig(str(server.kubeconfig))
        setup(target, base64.b64encode(Path(certs.ca_cert).read_bytes()).decode(), port)
        sides = (PLAIN, HOOKED, POLICED)
        for ns in sides:
            sequential(target, ns, "warm", 200)
        latency: dict[str, list[float]] = {ns: [] for ns in sides}
        rates: dict[str, list[float]] = {ns: [] for ns in sides}
        cpu: dict[str, list[float]] = {ns: [0.0, 0.0] for ns in sides}
        per = args.objects // args.clients
        for sitting in range(2):
            for ns in sides:
                latency[ns] += sequential(target, ns, f"s{sitting}", args.sequential)
                load = Workload(base=f"/api/v1/namespaces/{ns}/configmaps")
                names = [[f"p{sitting}-{c}-{i}" for i in range(per)] for c in range(args.clients)]
                before = cpu_seconds(server.process.pid), cpu_seconds(hook.pid)
                run = run_parallel(target, "create", args.clients, per, names, load)
                rate, errors = run.rate, run.errors
                cpu[ns][0] += cpu_seconds(server.process.pid) - before[0]
                cpu[ns][1] += cpu_seconds(hook.pid) - before[1]
                if errors:
                    raise SystemExit(f"{ns}: {errors} failed creates")
                rates[ns].append(rate)
    finally:
        hook.terminate()
        server.stop()
    report(latency, rates, cpu, 2 * per * args.clients, args.clients)


def report(
    latency: dict[str, list[float]],
    rates: dict[str, list[float]],
    cpu: dict[str, list[float]],
    done: int,
    clients: int,
) -> None:
    head = f"req/s, {clients} clients"
    print(
        f"\n{'create, admitted by':<26}{'median ms':>10}{'p99 ms':>9}{head:>22}{'server CPU ms':>15}"
    )
    for ns, label in LABELS.items():
        values = latency[ns]
        print(
            f"{label:<26}{statistics.median(values) * 1000:>10.2f}{p99(values) * 1000:>9.2f}"
            f"{' / '.join(f'{r:.0f}' for r in rates[ns]):>22}{cpu[ns][0] / done * 1000:>15.2f}"
        )
    print(f"webhook process CPU per create: {cpu[HOOKED][1] / done * 1000:.2f} ms")
    base = statistics.median(latency[PLAIN])
    for ns in (HOOKED, POLICED):
        added = statistics.median(latency[ns]) - base
        print(f"added by {LABELS[ns]} (median): {added * 1000:.2f} ms")


if __name__ == "__main__":
    main()
