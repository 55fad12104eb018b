"""How long one large write keeps the server from answering everyone else.

    python benchmarks/stallbench.py --kubeconfig platform-data/admin.kubeconfig

One process writes large ConfigMaps (``--keys`` entries each, as JSON or YAML; create,
then replace) and reads each back as YAML, while another GETs a small object in a loop on
its own connection; prints each large request's time and the small GETs' latency
meanwhile (median, p99, slowest). The slowest small GET is how long the server answered
nobody else.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing as mp
import os
import statistics
import time
from typing import Any

import orjson
import yaml

from benchmarks.loadgen import Target, from_kubeconfig

NAMESPACE = f"stall-{os.getpid()}"
BASE = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


def _body(name: str, keys: int, as_yaml: bool, version: str = "") -> bytes:
    meta: dict[str, Any] = {"name": name}
    if version:
        meta["resourceVersion"] = version
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {f"k{i:06d}": "v" for i in range(keys)},
    }
    return yaml.safe_dump(obj).encode() if as_yaml else orjson.dumps(obj)


def _prober(target: Target, stop: Any, out: Any) -> None:
    wire = target.wire()
    samples = []
    while not stop.is_set():
        start = time.perf_counter()
        status, _ = wire.request("GET", f"{BASE}/small")
        assert status == 200, status
        samples.append(time.perf_counter() - start)
    out.put(samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--keys", type=int, default=90000)
    parser.add_argument(
        "--writes", type=int, default=3, help="large objects, each created and replaced"
    )
    parser.add_argument("--yaml", action="store_true", help="send the large bodies as YAML")
    args = parser.parse_args()
    target = from_kubeconfig(args.kubeconfig)
    wire = target.wire()
    wire.request("POST", "/api/v1/namespaces", orjson.dumps({"metadata": {"name": NAMESPACE}}))
    wire.request("POST", BASE, orjson.dumps({"metadata": {"name": "small"}, "data": {"a": "b"}}))
    ctype = "application/yaml" if args.yaml else "application/json"
    yaml_reader = dataclasses.replace(target, accept="application/yaml").wire()
    stop, out = mp.Event(), mp.Queue()
    prober = mp.Process(target=_prober, args=(target, stop, out))
    prober.start()
    time.sleep(0.5)
    body_size, took = 0, []
    for i in range(args.writes):
        name = f"large-{i}"
        body = _body(name, args.keys, args.yaml)
        body_size = len(body)
        start = time.perf_counter()
        status, created = wire.request("POST", BASE, body, ctype)
        took.append(("create", status, time.perf_counter() - start))
        version = orjson.loads(created)["metadata"]["resourceVersion"]
        body = _body(name, args.keys, args.yaml, version)
        start = time.perf_counter()
        status, _ = wire.request("PUT", f"{BASE}/{name}", body, ctype)
        took.append(("replace", status, time.perf_counter() - start))
        start = time.perf_counter()
        status, _ = yaml_reader.request("GET", f"{BASE}/{name}")
        took.append(("get yaml", status, time.perf_counter() - start))
    stop.set()
    samples = sorted(out.get())
    prober.join()
    wire.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}")
    print(f"large body: {body_size} bytes ({'YAML' if args.yaml else 'JSON'}, {args.keys} keys)")
    for verb, status, seconds in took:
        print(f"  {verb:8s} {status}  {seconds:.3f} s")
    p99 = samples[int(len(samples) * 0.99) - 1]
    print(
        f"small GETs meanwhile: {len(samples)}, median {statistics.median(samples) * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, slowest {samples[-1] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
