"""Watch fan-out: N watchers see M creates; idle-watcher memory; paged list of many objects.

    python benchmarks/watchbench.py --kubeconfig platform-data/admin.kubeconfig [--server-pid PID]

Watchers are raw asyncio TLS streams (HTTP/1.1) that count ADDED events, so one client
process can hold hundreds of them without becoming the bottleneck. Creates come from
loadgen's writer processes. With --server-pid the server's RSS is read from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import ssl
import sys
import time
from typing import Any

import loadgen

MARK = b'"type":"ADDED"'


def rss_mb(pid: int | None, field: str = "VmRSS") -> float:
    if not pid:
        return float("nan")
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def ssl_context(target: loadgen.Target) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=target.ca)
    ctx.check_hostname = False
    if target.insecure:
        ctx.verify_mode = ssl.CERT_NONE
    if target.cert:
        ctx.load_cert_chain(target.cert, target.key)
    return ctx


CUT_OFF: list[int] = []  # events seen by each watcher the server closed (kube's slow-watcher cut)
_RV = re.compile(rb'"resourceVersion":"(\d+)"')


async def watcher(target: loadgen.Target, ctx: ssl.SSLContext, path: str, expected: int) -> float:
    """Returns the time the ``expected``-th ADDED event arrived.

    The body is de-chunked, then split into events: Go's server cuts chunks wherever its
    buffer fills, so a chunk-size line can fall inside an event.  A watch the server
    ends early (kube closes watchers it finds slow) is resumed from the last event's
    resourceVersion, as a client would; ``CUT_OFF`` records it."""
    base, _, revision = path.partition("&resourceVersion=")
    seen = 0
    while True:
        seen, last = await _watch_once(
            target, ctx, f"{base}&resourceVersion={revision}", expected, seen
        )
        if seen >= expected:
            return time.perf_counter()
        CUT_OFF.append(seen)
        revision = last or revision


async def _watch_once(
    target: loadgen.Target, ctx: ssl.SSLContext, path: str, expected: int, seen: int
) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection(target.host, target.port, ssl=ctx)
    auth = f"Authorization: Bearer {target.token}\r\n" if target.token else ""
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {target.host}\r\nAccept: application/json\r\n{auth}\r\n".encode()
    )
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")  # the response head
    pending, last = b"", b""
    while seen < expected:
        size = int((await reader.readline()).split(b";")[0], 16)
        if size == 0:
            break
        *events, pending = (pending + (await reader.readexactly(size + 2))[:-2]).split(b"\n")
        for event in events:
            seen += MARK in event
            found = _RV.search(event)
            last = found.group(1) if found else last
    writer.close()
    return seen, last.decode()


def current_revision(target: loadgen.Target, namespace: str) -> str:
    conn = target.connect()
    path = f"/api/v1/namespaces/{namespace}/configmaps?limit=1"
    revision: str = json.loads(loadgen.request(conn, target, "GET", path)[1])["metadata"][
        "resourceVersion"
    ]
    return revision


async def fan_out(
    target: loadgen.Target, namespace: str, watchers: int, creates: int
) -> tuple[float, float]:
    """(seconds until the writers were done, seconds until every watcher saw every event)"""
    revision = current_revision(target, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={revision}"
    ctx = ssl_context(target)
    tasks = [asyncio.create_task(watcher(target, ctx, path, creates)) for _ in range(watchers)]
    await asyncio.sleep(0.5 + watchers / 200)  # all watchers connected and subscribed
    per = creates // 8
    names = [[f"w{watchers}-{c}-{i}" for i in range(per)] for c in range(8)]
    loop = asyncio.get_running_loop()
    timings: list[float] = []

    def write() -> None:
        load = loadgen.Workload(base=f"/api/v1/namespaces/{namespace}/configmaps")
        run = loadgen.run_parallel(target, "create", 8, per, names, load)
        rate, errors = run.rate, run.errors
        if errors:
            print(f"fan-out: {errors} of {per * 8} creates failed", file=sys.stderr)
        timings.append(per * 8 / rate)

    writing = loop.run_in_executor(None, write)
    finished = await asyncio.gather(*tasks)
    await writing
    # run_parallel starts its clock when its clients are connected: align on the writes' end.
    writes_done = time.perf_counter()
    last_event = max(finished)
    return timings[0], timings[0] + max(0.0, last_event - writes_done)


async def idle(target: loadgen.Target, namespace: str, watchers: int, pid: int | None) -> float:
    before = rss_mb(pid)
    revision = current_revision(target, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={revision}"
    ctx = ssl_context(target)
    tasks = [asyncio.create_task(watcher(target, ctx, path, 10**9)) for _ in range(watchers)]
    await asyncio.sleep(3 + watchers / 200)
    after = rss_mb(pid)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return after - before


def paged_list(target: loadgen.Target, namespace: str, limit: int) -> tuple[int, float]:
    conn = target.connect()
    base = f"/api/v1/namespaces/{namespace}/configmaps?limit={limit}"
    token, total = "", 0
    start = time.perf_counter()
    while True:
        _status, raw = loadgen.request(
            conn, target, "GET", base + (f"&continue={token}" if token else "")
        )
        page: Any = json.loads(raw)
        total += len(page["items"])
        token = page["metadata"].get("continue", "")
        if not token:
            return total, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--creates", type=int, default=1000)
    parser.add_argument("--idle-watchers", type=int, default=1000)
    parser.add_argument(
        "--list-objects", type=int, default=0, help="seed this many and page through them"
    )
    args = parser.parse_args()
    target = loadgen.from_kubeconfig(args.kubeconfig)
    conn = target.connect()
    namespace = loadgen.NAMESPACE
    loadgen.request(
        conn,
        target,
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
    )
    loadgen.BASE = f"/api/v1/namespaces/{namespace}/configmaps"
    print(f"{'measure':<44}{'value':>12}")
    for watchers in (1, 100):
        writes, seen = asyncio.run(fan_out(target, namespace, watchers, args.creates))
        label = f"{args.creates} creates seen by {watchers} watcher(s)"
        print(f"{label:<44}{seen:>10.2f} s   (writes alone {writes:.2f} s)")
    grown = asyncio.run(idle(target, namespace, args.idle_watchers, args.server_pid))
    print(f"{f'RSS growth for {args.idle_watchers} idle watchers':<44}{grown:>9.1f} MB")
    if args.list_objects:
        existing = 2 * args.creates
        todo = max(0, args.list_objects - existing)
        per = todo // 8
        names = [[f"l-{c}-{i}" for i in range(per)] for c in range(8)]
        if per:
            loadgen.run_parallel(target, "create", 8, per, names)
        before = rss_mb(args.server_pid, "VmHWM")
        total, seconds = paged_list(target, namespace, 500)
        after = rss_mb(args.server_pid, "VmHWM")
        print(f"{f'paged list of {total} objects (limit 500)':<44}{seconds:>10.2f} s")
        print(f"{'server peak RSS before / after the list':<44}{before:>6.0f} / {after:.0f} MB")
    # A fresh connection: the first may have idled past the server's keep-alive timeout.
    loadgen.request(target.connect(), target, "DELETE", f"/api/v1/namespaces/{namespace}")


if __name__ == "__main__":
    main()
