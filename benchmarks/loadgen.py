"""Load generator for any Kubernetes-compatible API server; prints a table.

    python benchmarks/loadgen.py --kubeconfig platform-data/admin.kubeconfig
    python benchmarks/loadgen.py --server https://host:6443 --token T --insecure

Measures sequential GET latency (p50/p99) and, with N client processes on keep-alive
connections, throughput of create, get, update, merge patch and list of 1000 ~200-byte ConfigMaps.
Each client is a separate process so the load generator is not GIL-bound, and speaks
HTTP/1.1 on its own socket (``Wire``): on a 2-core machine the load generator shares the
cores with the server, and http.client's ~150 µs of CPU per request took a third of them.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import dataclasses
import http.client
import json
import multiprocessing as mp
import os
import shutil
import socket
import ssl
import statistics
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

NAMESPACE = f"bench-{os.getpid()}"  # a fresh namespace per run: nothing left from the last
PAYLOAD = "x" * 120  # with metadata, ~200 bytes per ConfigMap


@dataclass
class Target:
    host: str
    port: int
    ca: str | None
    cert: str | None
    key: str | None
    token: str | None
    insecure: bool
    accept: str = "application/json"

    def tls(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca)
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert:
            ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.tls())

    def wire(self) -> Wire:
        """A lean keep-alive connection for the measured loops."""
        raw = socket.create_connection((self.host, self.port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = "".join(f"{k}: {v}\r\n" for k, v in self.headers().items() if k != "Content-Type")
        sock = self.tls().wrap_socket(raw, server_hostname=self.host)
        return Wire(sock, f"Host: {self.host}\r\n{head}")

    def headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": self.accept}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out


class Wire:
    """HTTP/1.1 over one TLS socket, as little Python per request as will do: the request
    head is one formatted string, the response is split on bytes (Content-Length or
    chunked).  Enough for API requests; not a general client."""

    def __init__(self, sock: ssl.SSLSocket, head: str) -> None:
        self.sock, self.head = sock, head
        self.buf, self.pos = bytearray(), 0
        self.chunk = memoryview(bytearray(16384))  # one TLS record at most

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = ""
    ) -> tuple[int, bytes]:
        extra = ""
        if body is not None:
            ctype = content_type or "application/json"
            extra = f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        head = f"{method} {path} HTTP/1.1\r\n{self.head}{extra}\r\n".encode()
        self.sock.sendall(head + body if body else head)
        return self._response()

    def _response(self) -> tuple[int, bytes]:
        lines = self._until(b"\r\n\r\n").split(b"\r\n")
        status = int(lines[0][9:12])
        fields = dict(line.lower().split(b": ", 1) for line in lines[1:])
        if b"content-length" in fields:
            return status, self._take(int(fields[b"content-length"]))
        if fields.get(b"transfer-encoding") != b"chunked":
            return status, b""
        chunks = []
        while n := int(self._until(b"\r\n").split(b";")[0], 16):
            chunks.append(self._take(n))
            self._take(2)
        self._take(2)  # the last chunk's CRLF (no trailers)
        return status, b"".join(chunks)

    def _until(self, sep: bytes) -> bytes:
        while (end := self.buf.find(sep, self.pos)) < 0:
            self._fill()
        out, self.pos = bytes(self.buf[self.pos : end]), end + len(sep)
        return out

    def _take(self, n: int) -> bytes:
        have = len(self.buf) - self.pos
        if have >= n:
            out, self.pos = bytes(self.buf[self.pos : self.pos + n]), self.pos + n
            return out
        body = bytearray(n)  # a large body is received in place and kept: no 2 MB copies
        body[:have] = self.buf[self.pos :]
        self.buf, self.pos = bytearray(), 0
        view = memoryview(body)
        while have < n:
            got = self.sock.recv_into(view[have:])
            if not got:
                raise ConnectionError("the server closed the connection")
            have += got
        return body  # type: ignore[return-value]  # bytes-like; every reader takes it

    def _fill(self) -> None:
        del self.buf[: self.pos]
        self.pos = 0
        got = self.sock.recv_into(self.chunk)
        if not got:
            raise ConnectionError("the server closed the connection")
        self.buf += self.chunk[:got]


def scratch_dir(prefix: str) -> str:
    """A new temporary directory, removed when this process exits: a benchmark's server
    data and the clients' key files are not left behind.  Forked clients end with
    ``os._exit``, so only the process that made it removes it."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


def from_kubeconfig(path: str) -> Target:
    with open(path) as f:
        config = yaml.safe_load(f)
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])[
        "context"
    ]
    cluster = next(c for c in config["clusters"] if c["name"] == context["cluster"])["cluster"]
    user = next(u for u in config["users"] if u["name"] == context["user"])["user"]
    tmp = scratch_dir("loadgen-")

    def materialize(data_key: str, file_key: str, holder: dict[str, Any], name: str) -> str | None:
        if data_key in holder:
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(base64.b64decode(holder[data_key]))
            return path
        return holder.get(file_key)

    url = urllib.parse.urlparse(cluster["server"])
    return Target(
        url.hostname or "127.0.0.1",
        url.port or 443,
        materialize("certificate-authority-data", "certificate-authority", cluster, "ca.crt"),
        materialize("client-certificate-data", "client-certificate", user, "client.crt"),
        materialize("client-key-data", "client-key", user, "client.key"),
        user.get("token"),
        bool(cluster.get("insecure-skip-tls-verify")),
    )


def request(
    conn: http.client.HTTPSConnection,
    target: Target,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "",
) -> tuple[int, bytes]:
    if body is None or isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode()
    headers = target.headers()
    if content_type:
        headers["Content-Type"] = content_type
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": PAYLOAD},
    }


BASE = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True)
class Workload:
    """What the clients work on: a collection, how a new object looks, the Accept type."""

    base: str = BASE
    make: Callable[[str], dict[str, Any]] = configmap
    accept: str = "application/json"


def worker(
    target: Target,
    op: str,
    names: list[str],
    count: int,
    out: Any,
    ready: Any,
    load: Workload = Workload(),
) -> None:
    wire = dataclasses.replace(target, accept=load.accept).wire()
    wire.request("GET", "/version")  # the TLS handshake happens before the clock starts
    base = load.base
    errors = 0
    latest: dict[str, Any] = {}
    if op == "update":  # one GET per object up front; each update is then one PUT
        plain = dataclasses.replace(target, accept="application/json").wire()
        for name in names:
            latest[name] = orjson.loads(plain.request("GET", f"{base}/{name}")[1])
    ready.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        name = names[i % len(names)]
        if op == "create":
            status, _ = wire.request("POST", base, orjson.dumps(load.make(name)))
            ok = status == 201
        elif op == "get":
            status, _ = wire.request("GET", f"{base}/{name}")
            ok = status == 200
        elif op == "update":
            obj = latest[name]
            obj["data"]["v"] = PAYLOAD[:-8] + f"{i:08d}"
            status, raw = wire.request("PUT", f"{base}/{name}", orjson.dumps(obj))
            ok = status == 200
            if ok:
                latest[name] = orjson.loads(raw)
        elif op == "patch":
            # Not the value the update run wrote for this ``i``: that would be a no-op
            # patch, which stores nothing.
            patch = orjson.dumps({"data": {"v": PAYLOAD[:-8] + f"p{i:07d}"}})
            status, _ = wire.request("PATCH", f"{base}/{name}", patch, MERGE_PATCH)
            ok = status == 200
        else:  # list
            status, _ = wire.request("GET", base)
            ok = status == 200
        errors += 0 if ok else 1
    out.put((time.perf_counter() - start, count, errors, time.process_time() - cpu))


@dataclass(frozen=True)
class Run:
    """One run of N clients: requests per second, failed requests, and the CPU the
    machine spent per request apart from the clients' own (the server's, with its
    database: kube-apiserver's etcd, this server's writer processes)."""

    rate: float
    errors: int
    server_cpu_ms: float
    probed: tuple[Any, Any] = (None, None)  # ``probe`` at the start and at the end
    clients_cpu_ms: float = 0.0  # the clients' own CPU per request


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (not idle or waiting on I/O)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:  # not Linux: no figure
        return float("nan")
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def run_parallel(
    target: Target,
    op: str,
    clients: int,
    per_client: int,
    names: list[list[str]],
    load: Workload = Workload(),
    probe: Callable[[], Any] | None = None,
) -> Run:
    """``clients`` processes doing ``op`` ``per_client`` times each, timed together;
    ``probe`` (what the server's processes have spent, say) is read as the clock starts
    and stops."""
    queue: Any = mp.Queue()
    ready: Any = mp.Barrier(clients + 1)
    procs = [
        mp.Process(target=worker, args=(target, op, names[c], per_client, queue, ready, load))
        for c in range(clients)
    ]
    for p in procs:
        p.start()
    ready.wait()  # every client is connected (and has done its setup): go
    first = probe() if probe is not None else None
    start, busy = time.perf_counter(), machine_busy()
    results = [queue.get() for _ in procs]
    elapsed, busy = time.perf_counter() - start, machine_busy() - busy
    last = probe() if probe is not None else None
    for p in procs:
        p.join()
    total = sum(r[1] for r in results)
    errors = sum(r[2] for r in results)
    clients_cpu = sum(r[3] for r in results)
    server_cpu = (busy - clients_cpu) * 1000 / max(total, 1)
    return Run(
        total / elapsed, errors, server_cpu, (first, last), clients_cpu * 1000 / max(total, 1)
    )


def sequential_get(target: Target, name: str, count: int) -> tuple[float, float]:
    wire = target.wire()
    wire.request("GET", f"{BASE}/{name}")
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        wire.request("GET", f"{BASE}/{name}")
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig")
    parser.add_argument("--server")
    parser.add_argument("--token")
    parser.add_argument("--insecure", action="store_true")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--list-requests", type=int, default=200)
    args = parser.parse_args()
    if args.kubeconfig:
        target = from_kubeconfig(args.kubeconfig)
    else:
        url = urllib.parse.urlparse(args.server)
        target = Target(
            url.hostname or "", url.port or 443, None, None, None, args.token, args.insecure
        )
    conn = target.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    status, body = request(conn, target, "POST", "/api/v1/namespaces", namespace)
    if status != 201:
        raise SystemExit(f"cannot create namespace {NAMESPACE}: {status} {body[:200]!r}")

    clients, objects = args.clients, args.objects
    per = objects // clients
    names = [[f"cm-{c}-{i}" for i in range(per)] for c in range(clients)]
    rows = []
    run = run_parallel(target, "create", clients, per, names)
    rate, errs = run.rate, run.errors
    rows.append(("create", rate, errs))
    p50, p99 = sequential_get(target, names[0][0], 1000)
    run = run_parallel(target, "get", clients, per * 3, names)
    rate, errs = run.rate, run.errors
    rows.append(("get", rate, errs))
    run = run_parallel(target, "update", clients, per, names)
    rate, errs = run.rate, run.errors
    rows.append(("update", rate, errs))
    run = run_parallel(target, "patch", clients, per, names)
    rate, errs = run.rate, run.errors
    rows.append(("patch (merge)", rate, errs))
    run = run_parallel(target, "list", clients, max(1, args.list_requests // clients), names)
    rate, errs = run.rate, run.errors
    rows.append((f"list ({objects} objects)", rate, errs))

    print(f"\n{'operation':<26}{'req/s':>10}{'errors':>8}   ({clients} clients, keep-alive)")
    for name, rate, errs in rows:
        print(f"{name:<26}{rate:>10.0f}{errs:>8}")
    print(f"{'sequential GET':<26}   p50 {p50:.2f} ms   p99 {p99:.2f} ms")
    request(conn, target, "DELETE", f"/api/v1/namespaces/{NAMESPACE}")


if __name__ == "__main__":
    main()
