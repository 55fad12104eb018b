"""Custom resources against ConfigMaps, and how soon a new type serves; prints a table.

    python benchmarks/crdbench.py --kubeconfig platform-data/admin.kubeconfig
    python benchmarks/crdbench.py --kubeconfig ref.kubeconfig --group-suffix k8s.io

Measures (1) the time from a CRD's create to the first accepted instance of its type
(several fresh CRDs), and (2) create throughput with N client processes for a custom
resource whose schema carries five CEL rules, side by side with ~200-byte ConfigMaps,
alternating twice so both see the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks.loadgen import (
    NAMESPACE,
    PAYLOAD,
    Target,
    Workload,
    from_kubeconfig,
    request,
    run_parallel,
)

GROUP = "bench.example.com"
RULES = [
    {"rule": "self.replicas >= 0", "message": "replicas must not be negative"},
    {"rule": "self.replicas <= self.maxReplicas"},
    {"rule": "self.image.startsWith('registry.example.com/')"},
    {"rule": "self.tags.all(t, t.size() <= 16)"},
    {"rule": "!has(self.mode) || self.mode in ['fast', 'slow']"},
]
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": RULES,
            "properties": {
                "replicas": {"type": "integer"},
                "maxReplicas": {"type": "integer", "default": 10},
                "image": {"type": "string", "maxLength": 128},
                "mode": {"type": "string", "maxLength": 8},
                "tags": {
                    "type": "array",
                    "maxItems": 8,
                    "items": {"type": "string", "maxLength": 32},
                },
            },
        }
    },
}


def crd(group: str, plural: str, kind: str, apiextensions: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{apiextensions}/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": SCHEMA},
                }
            ],
        },
    }


def widget(name: str, group: str = GROUP) -> dict[str, Any]:
    spec = {
        "replicas": 3,
        "image": "registry.example.com/app:1",
        "mode": "fast",
        "tags": ["a", "b"],
    }
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "annotations": {"note": PAYLOAD[:40]}},
        "spec": spec,
    }


def first_instance(target: Target, apiextensions: str, rounds: int) -> list[float]:
    """Seconds from each fresh CRD's create to its first accepted instance."""
    conn = target.connect()
    out = []
    base = f"/apis/{apiextensions}/v1/customresourcedefinitions"
    for i in range(rounds):
        group = f"r{i}-{int(time.time())}.{GROUP}"
        status, body = request(
            conn, target, "POST", base, crd(group, "widgets", "Widget", apiextensions)
        )
        if status != 201:
            raise SystemExit(f"CRD create: {status} {body[:300]!r}")
        start = time.perf_counter()
        path = f"/apis/{group}/v1/namespaces/{NAMESPACE}/widgets"
        while True:
            status, _ = request(conn, target, "POST", path, widget("first", group))
            if status == 201:
                break
            time.sleep(0.002)
        out.append(time.perf_counter() - start)
        request(conn, target, "DELETE", f"{base}/widgets.{group}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--group-suffix", default="platform.io", help="k8s.io for kube itself")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    target = from_kubeconfig(args.kubeconfig)
    apiextensions = f"apiextensions.{args.group_suffix}"
    conn = target.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    request(conn, target, "POST", "/api/v1/namespaces", namespace)
    latencies = first_instance(target, apiextensions, args.rounds)
    base = f"/apis/{apiextensions}/v1/customresourcedefinitions"
    request(conn, target, "POST", base, crd(GROUP, "widgets", "Widget", apiextensions))
    time.sleep(2.5)  # kube waits 2 s after establishing before it takes creates
    custom = Workload(base=f"/apis/{GROUP}/v1/namespaces/{NAMESPACE}/widgets", make=widget)
    per = args.objects // args.clients
    rows: dict[str, list[float]] = {"ConfigMap": [], "Widget (5 CEL rules)": []}
    for load in (Workload(), custom):  # warm up both paths (caches, the LMDB map) unmeasured
        names = [[f"warm-{c}-{i}" for i in range(per // 4)] for c in range(args.clients)]
        run_parallel(target, "create", args.clients, per // 4, names, load)
    for sitting in range(2):
        for label, load in (("ConfigMap", Workload()), ("Widget (5 CEL rules)", custom)):
            names = [[f"o{sitting}-{c}-{i}" for i in range(per)] for c in range(args.clients)]
            run = run_parallel(target, "create", args.clients, per, names, load)
            rate, errors = run.rate, run.errors
            if errors:
                raise SystemExit(f"{label}: {errors} failed creates")
            rows[label].append(rate)
    print(f"\nCRD create -> first instance accepted ({args.rounds} fresh CRDs)")
    print(
        f"  median {statistics.median(latencies) * 1000:.0f} ms, "
        f"min {min(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms"
    )
    print(f"\n{'create':<24}{'req/s (two sittings)':>24}   ({args.clients} clients)")
    for label, rates in rows.items():
        print(f"{label:<24}{' / '.join(f'{r:.0f}' for r in rates):>24}")
    ratio = [w / c for w, c in zip(rows["Widget (5 CEL rules)"], rows["ConfigMap"], strict=True)]
    print(f"{'ratio':<24}{' / '.join(f'{r:.2f}x' for r in ratio):>24}")
    request(conn, target, "DELETE", f"{base}/widgets.{GROUP}")
    request(conn, target, "DELETE", f"/api/v1/namespaces/{NAMESPACE}")


if __name__ == "__main__":
    main()
