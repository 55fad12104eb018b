"""One abusive client and one polite one, with and without API Priority and Fairness.

    python benchmarks/apfbench.py                    # both modes, 10 s each
    python benchmarks/apfbench.py --seconds 20 --abusers 30

Starts a server per mode with a small concurrency limit (``--max-requests-inflight 20
--max-mutating-requests-inflight 10``: 30 seats, so the ``global-default`` level both
users fall in has ceil(30 * 20 / 245) = 3).  The abuser (user ``abuser``) keeps
``--abusers`` ConfigMap creates outstanding at all times, ten times the level's seats,
from a pool of processes; the polite user creates one ConfigMap every 50 ms.  Both are
ordinary authenticated users, so with APF they share one level as two flows and fair
queuing gives the polite flow its share; without APF (max-in-flight only) whoever finds
the 10 mutating seats full gets a 429.  Prints the polite client's p50/p99 latency and
success rate for each mode, and the abuser's throughput and rejections.

``--micro`` measures instead what the filter adds to a request in process (µs, exempt
and non-exempt user), against the max-in-flight limiter.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.loadgen import Target, configmap, request
from platform_api.testing import ApiServer

TOKENS = "abuser-token,abuser,u-abuser,\npolite-token,polite,u-polite,\n"
LIMITS = ("--max-requests-inflight", "20", "--max-mutating-requests-inflight", "10")


def _target(server: ApiServer, token: str) -> Target:
    host, port = server.base_url.split("//", 1)[1].rsplit(":", 1)
    return Target(host, int(port), server.ca, None, None, token, False)


def _abuse(target: Target, namespace: str, threads: int, stop_at: float, out: Any) -> None:
    """One process of the abusive pool: ``threads`` creates always outstanding."""
    counts = {"ok": 0, "429": 0, "other": 0}
    lock = threading.Lock()

    def loop(n: int) -> None:
        conn = target.connect()
        i = 0
        while time.time() < stop_at:
            i += 1
            try:
                status, _ = request(
                    conn,
                    target,
                    "POST",
                    f"/api/v1/namespaces/{namespace}/configmaps",
                    configmap(f"a-{mp.current_process().pid}-{n}-{i}"),
                )
            except OSError:
                conn = target.connect()
                status = 0
            key = "ok" if status == 201 else "429" if status == 429 else "other"
            with lock:
                counts[key] += 1

    workers = [threading.Thread(target=loop, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.put(counts)


def _polite(target: Target, namespace: str, stop_at: float) -> list[tuple[float, int]]:
    """A create every 50 ms: (latency, status) of each."""
    conn = target.connect()
    results: list[tuple[float, int]] = []
    i = 0
    while time.time() < stop_at:
        i += 1
        started = time.perf_counter()
        try:
            status, _ = request(
                conn,
                target,
                "POST",
                f"/api/v1/namespaces/{namespace}/configmaps",
                configmap(f"p-{i}"),
            )
        except OSError:
            conn = target.connect()
            status = 0
        elapsed = time.perf_counter() - started
        results.append((elapsed, status))
        time.sleep(max(0.0, 0.05 - elapsed))
    return results


def run_mode(apf: bool, seconds: float, abusers: int, root: Path) -> dict[str, Any]:
    tokens = root / "tokens.csv"
    tokens.write_text(TOKENS)
    flag = f"--enable-priority-and-fairness={'true' if apf else 'false'}"
    data = root / f"{'apf' if apf else 'plain'}-{abusers}"
    server = ApiServer.start(data, "--token-auth-file", str(tokens), *LIMITS, flag)
    try:
        server.create_namespace("abuse")
        server.create_namespace("polite")
        time.sleep(1.0)
        stop_at = time.time() + seconds
        ctx = mp.get_context("fork")
        out: Any = ctx.Queue()
        procs = 3
        target = _target(server, "abuser-token")
        per_process = max(1, abusers // procs)
        pool = [
            ctx.Process(target=_abuse, args=(target, "abuse", per_process, stop_at, out))
            for _ in range(procs if abusers else 0)
        ]
        for p in pool:
            p.start()
        time.sleep(0.5)  # the flood is on before the polite client starts
        polite = _polite(_target(server, "polite-token"), "polite", stop_at)
        abuse = {"ok": 0, "429": 0, "other": 0}
        for _ in pool:
            for key, value in out.get(timeout=seconds + 30).items():
                abuse[key] += value
        for p in pool:
            p.join()
    finally:
        server.stop()
    latencies = sorted(lat for lat, _ in polite)
    ok = sum(1 for _, status in polite if status == 201)
    return {
        "mode": ("APF" if apf else "max-in-flight") + ("" if abusers else ", alone"),
        "polite_n": len(polite),
        "polite_ok": ok / max(1, len(polite)),
        "p50": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99": latencies[int(0.99 * (len(latencies) - 1))] * 1000 if latencies else 0.0,
        "abuse_ok_per_s": abuse["ok"] / seconds,
        "abuse_429": abuse["429"],
    }


def _drive(coro: Any) -> None:
    """Run a coroutine that never waits (the fast path) to its end."""
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the request waited")


def micro(count: int) -> None:
    """µs the filter adds per request, in process (no sockets), exempt and not."""
    from twisted.internet.defer import maybeDeferred  # noqa: PLC0415
    from twisted.internet.task import Clock  # noqa: PLC0415
    from twisted.web.server import Request  # noqa: PLC0415
    from twisted.web.test.requesthelper import DummyChannel  # noqa: PLC0415

    from platform_api import registry  # noqa: F401, PLC0415
    from platform_api.apiserver import requestinfo  # noqa: PLC0415
    from platform_api.apiserver.flowcontrol.config import FlowControlConfig  # noqa: PLC0415
    from platform_api.apiserver.flowcontrol.estimate import (  # noqa: PLC0415
        ObjectStats,
        WatchCounts,
        WorkEstimator,
    )
    from platform_api.apiserver.flowcontrol.filter import PriorityAndFairness  # noqa: PLC0415
    from platform_api.apiserver.inflight import InflightLimiter  # noqa: PLC0415
    from platform_api.authentication.user import UserInfo  # noqa: PLC0415
    from platform_api.controllers.informer import Informer  # noqa: PLC0415
    from platform_api.registry.flowcontrol_bootstrap import GROUP  # noqa: PLC0415
    from platform_api.registry.store import Store  # noqa: PLC0415
    from platform_api.scheme.catalog import builtin_scheme  # noqa: PLC0415
    from platform_api.storage.lmdb_store import LMDBStorage, open_environment  # noqa: PLC0415
    from platform_api.storage.watch import WatchHub  # noqa: PLC0415

    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        storage = LMDBStorage(open_environment(tmp, 2**26), maybeDeferred)
        hub = WatchHub(storage, clock)
        storage.on_commit = hub.committed
        scheme = builtin_scheme()
        fs, plc = (
            Store(scheme.lookup(GROUP, "v1", p), storage)  # type: ignore[arg-type]
            for p in ("flowschemas", "prioritylevelconfigurations")
        )
        config = FlowControlConfig(
            fs, plc, Informer(storage, hub, (fs.prefix, plc.prefix)), clock, 600
        )
        config.start(ensure=False)
        config.ensure()
        clock.advance(1)
        estimator = WorkEstimator(ObjectStats(storage, lambda: (fs, plc)), WatchCounts())
        apf = PriorityAndFairness(config, clock, 60.0, estimator)
        inflight = InflightLimiter(400, 200)
        request = Request(DummyChannel())
        request.args = {}
        info = requestinfo.parse(b"GET", "/api/v1/namespaces/a/configmaps/x", {})
        users = {
            "exempt (system:masters)": UserInfo("admin", groups=("system:masters",)),
            "non-exempt (global-default)": UserInfo("alice", groups=("system:authenticated",)),
        }
        print(
            f"{'user':<28} {'sync slot µs':>12} {'max-in-flight µs':>16} {'APF µs':>8} "
            f"{'APF added µs':>12}"
        )
        for label, user in users.items():
            best = {id(inflight): float("inf"), id(apf): float("inf")}
            for _ in range(7):  # alternating rounds; the best of each (the machine is shared)
                for limiter in (inflight, apf):
                    started = time.perf_counter()
                    for _ in range(count):
                        seat = limiter.admit(request, info, user)
                        _drive(seat.__aenter__())
                        _drive(seat.__aexit__(None, None, None))
                    took = (time.perf_counter() - started) / count * 1e6
                    best[id(limiter)] = min(best[id(limiter)], took)
            timings = [best[id(inflight)], best[id(apf)]]
            plain = float("inf")
            for _ in range(7):  # the limiter as site.py used it before: a sync ``with``
                started = time.perf_counter()
                for _ in range(count):
                    with inflight.slot(info, user):
                        pass
                plain = min(plain, (time.perf_counter() - started) / count * 1e6)
            print(
                f"{label:<28} {plain:>12.2f} {timings[0]:>16.2f} {timings[1]:>8.2f} "
                f"{timings[1] - timings[0]:>12.2f}"
            )
        config.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--abusers", type=int, default=30, help="creates kept outstanding")
    parser.add_argument("--micro", action="store_true", help="in-process cost per request")
    args = parser.parse_args()
    if args.micro:
        micro(20000)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="apfbench-") as tmp:
        for apf, abusers in ((True, 0), (True, args.abusers), (False, args.abusers)):
            rows.append(run_mode(apf, args.seconds, abusers, Path(tmp)))
    print(
        f"{'mode':<21} {'polite n':>8} {'success':>8} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'abuser ok/s':>11} {'abuser 429':>10}"
    )
    for r in rows:
        print(
            f"{r['mode']:<21} {r['polite_n']:>8} {r['polite_ok']:>8.1%} {r['p50']:>8.1f} "
            f"{r['p99']:>8.1f} {r['abuse_ok_per_s']:>11.0f} {r['abuse_429']:>10}"
        )


if __name__ == "__main__":
    main()
