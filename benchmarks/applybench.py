"""Server-side apply and strategic merge patch of a 50-container Deployment.

    python benchmarks/applybench.py --kubeconfig platform-data/admin.kubeconfig

Prints the median and p90 milliseconds of: a server-side apply that changes every
container's image (a JSON body, as kubectl sends it), a no-op re-apply, the same as
YAML text, and a strategic merge patch of one container.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import yaml
from loadgen import from_kubeconfig, request

NAMESPACE = f"applybench-{os.getpid()}"
APPLY = "application/apply-patch+yaml"
STRATEGIC = "application/strategic-merge-patch+json"


def deployment(tag: int, containers: int, as_json: bool = True) -> bytes:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "big", "labels": {"app": "big"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "big"}},
            "template": {
                "metadata": {"labels": {"app": "big"}},
                "spec": {
                    "containers": [
                        {
                            "name": f"c{i}",
                            "image": f"registry.example/app{i}:{tag}",
                            "ports": [{"containerPort": 8000 + i, "name": f"p{i}"}],
                            "env": [{"name": "INDEX", "value": str(i)}],
                            "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                        }
                        for i in range(containers)
                    ]
                },
            },
        },
    }
    return json.dumps(body).encode() if as_json else yaml.safe_dump(body).encode()


def timed(samples: list[float], call: Any) -> None:
    start = time.perf_counter()
    status, body = call()
    samples.append((time.perf_counter() - start) * 1000)
    if status not in (200, 201):
        raise SystemExit(f"unexpected {status}: {body[:300]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--containers", type=int, default=50)
    args = parser.parse_args()
    target = from_kubeconfig(args.kubeconfig)
    conn = target.connect()
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    request(conn, target, "POST", "/api/v1/namespaces", ns)
    url = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/big"
    apply_url = url + "?fieldManager=bench&force=true"
    request(conn, target, "PATCH", apply_url, deployment(0, args.containers), APPLY)
    changed: list[float] = []
    noop: list[float] = []
    as_yaml: list[float] = []
    patched: list[float] = []
    for run in range(1, args.runs + 1):
        body = deployment(run, args.containers)
        timed(changed, lambda b=body: request(conn, target, "PATCH", apply_url, b, APPLY))
        timed(noop, lambda b=body: request(conn, target, "PATCH", apply_url, b, APPLY))
        text = deployment(run, args.containers, as_json=False)
        timed(as_yaml, lambda b=text: request(conn, target, "PATCH", apply_url, b, APPLY))
        smp = {
            "spec": {"template": {"spec": {"containers": [{"name": "c7", "image": f"x:{run}"}]}}}
        }
        timed(patched, lambda p=smp: request(conn, target, "PATCH", url, p, STRATEGIC))
    print(f"\n{args.containers}-container Deployment, {args.runs} runs")
    for name, samples in (
        ("apply (all images change)", changed),
        ("apply (no-op)", noop),
        ("apply (no-op, YAML body)", as_yaml),
        ("strategic merge patch", patched),
    ):
        samples.sort()
        p90 = samples[int(len(samples) * 0.9) - 1]
        print(f"{name:<28} median {statistics.median(samples):7.1f} ms   p90 {p90:7.1f} ms")
    request(conn, target, "DELETE", f"/api/v1/namespaces/{NAMESPACE}")


if __name__ == "__main__":
    main()
