"""What the /metrics instrumentation costs a request: GETs with and without it.

    python benchmarks/metricsbench.py [--gets 3000] [--rounds 3]

Starts two servers, one with PLATFORM_APISERVER_BENCH_NO_METRICS=1 (no request,
authentication, authorization or storage instrumentation; the families are still
served), and GETs one ConfigMap from each in turn: one client on a keep-alive connection
(sequential, latency-bound), then 4 clients (throughput-bound).  Server CPU per request
comes from /proc, as in wirebench; the difference is the instrumentation's cost.
``--in-process`` times only the added work of one GET (request tracking, the timed
authenticator and authorizer, one timed storage read) on real objects, without the noise
of a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import timeit
from pathlib import Path

from twisted.internet.defer import ensureDeferred, succeed
from twisted.web.server import Request
from twisted.web.test.requesthelper import DummyChannel

from benchmarks.loadgen import (
    BASE,
    NAMESPACE,
    configmap,
    from_kubeconfig,
    request,
    run_parallel,
    scratch_dir,
)
from benchmarks.wirebench import cpu_seconds
from platform_api.apiserver import requestinfo, requestmetrics
from platform_api.apiserver.authmetrics import InstrumentedAuthenticator, InstrumentedAuthorizer
from platform_api.apiserver.storagemetrics import instrument
from platform_api.authentication.union import Anonymous, RequestAuthenticator
from platform_api.authorization.interface import Attributes
from platform_api.authorization.union import AlwaysAllow
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.testing import ApiServer

OFF = "PLATFORM_APISERVER_BENCH_NO_METRICS"


def start(instrumented: bool) -> ApiServer:
    data = Path(scratch_dir("metricsbench-")) / "data"
    if instrumented:
        os.environ.pop(OFF, None)
    else:
        os.environ[OFF] = "1"
    try:
        return ApiServer.start(data)
    finally:
        os.environ.pop(OFF, None)


def prepare(server: ApiServer) -> None:
    target = from_kubeconfig(str(server.kubeconfig))
    conn = target.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    request(conn, target, "POST", "/api/v1/namespaces", namespace)
    for c in range(4):
        request(conn, target, "POST", BASE, configmap(f"cm-{c}-0"))


def sequential(server: ApiServer, count: int) -> tuple[float, float]:
    """(req/s, server CPU µs per request) of ``count`` GETs on one connection."""
    assert server.process is not None
    target = from_kubeconfig(str(server.kubeconfig))
    conn = target.connect()
    request(conn, target, "GET", f"{BASE}/cm-0-0")
    cpu = cpu_seconds(server.process.pid)
    started = time.perf_counter()
    for _ in range(count):
        request(conn, target, "GET", f"{BASE}/cm-0-0")
    elapsed = time.perf_counter() - started
    used = cpu_seconds(server.process.pid) - cpu
    return count / elapsed, used * 1e6 / count


def parallel(server: ApiServer, count: int) -> tuple[float, float]:
    assert server.process is not None
    target = from_kubeconfig(str(server.kubeconfig))
    names = [[f"cm-{c}-0"] for c in range(4)]
    cpu = cpu_seconds(server.process.pid)
    run = run_parallel(target, "get", 4, count // 4, names)
    rate, errors = run.rate, run.errors
    assert errors == 0
    return rate, (cpu_seconds(server.process.pid) - cpu) * 1e6 / count


def in_process(count: int) -> dict[str, float]:
    """µs each piece of instrumentation adds to one GET, measured against the bare call."""
    path = "/api/v1/namespaces/default/configmaps/cm"
    info = requestinfo.parse(b"GET", path, {})

    def get(tracked: bool) -> None:
        request = Request(DummyChannel())
        request.method, request.uri, request.path = b"GET", path.encode(), path.encode()
        if tracked:
            requestmetrics.track(request, info)
        request.write(b"x" * 300)
        request.finish()

    authn = RequestAuthenticator([], [], Anonymous())
    authz = AlwaysAllow()
    request = Request(DummyChannel())
    attrs = Attributes.from_request(ensureDeferred(authn.authenticate(request, path)).result, info)
    storage = LMDBStorage(
        open_environment(scratch_dir("metricsbench-"), 2**24),
        lambda work: succeed(work()),
    )
    key = b"/core/configmaps/default\x00cm"
    storage.create(key, configmap("cm"))
    timed_storage = LMDBStorage(storage._env, lambda work: succeed(work()))
    instrument(timed_storage)
    pairs = {
        "request tracking": (lambda: get(False), lambda: get(True)),
        "authentication": (
            lambda: ensureDeferred(authn.authenticate(request, path)),
            lambda: ensureDeferred(InstrumentedAuthenticator(authn).authenticate(request, path)),
        ),
        "authorization": (
            lambda: ensureDeferred(authz.authorize(attrs)),
            lambda: ensureDeferred(InstrumentedAuthorizer(authz).authorize(attrs)),
        ),
        "storage get": (lambda: storage.get(key), lambda: timed_storage.get(key)),
    }
    added = {}
    for name, (bare, timed) in pairs.items():
        runs = [
            timeit.timeit(timed, number=count) - timeit.timeit(bare, number=count) for _ in range(5)
        ]
        added[name] = statistics.median(runs) * 1e6 / count
    return added


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gets", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    if args.in_process:
        added = in_process(args.gets)
        for name, micros in added.items():
            print(f"{name:<20}{micros:>8.1f} µs")
        print(f"{'total per GET':<20}{sum(added.values()):>8.1f} µs")
        return
    servers = {"with metrics": start(True), "without": start(False)}
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    try:
        for server in servers.values():
            prepare(server)
        for _ in range(args.rounds):  # alternate, so both see the same machine load
            for label, server in servers.items():
                results.setdefault((label, "1 client"), []).append(sequential(server, args.gets))
                results.setdefault((label, "4 clients"), []).append(parallel(server, args.gets))
    finally:
        for server in servers.values():
            server.stop()
    print(f"\n{'server':<14}{'load':<11}{'req/s':>9}{'CPU µs/req':>12}   (median of rounds)")
    for (label, load), runs in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rate = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"{label:<14}{load:<11}{rate:>9.0f}{cpu:>12.0f}")


if __name__ == "__main__":
    main()
