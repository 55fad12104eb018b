"""Audit cost: a Metadata-level policy logging every request to a file.

    python benchmarks/auditbench.py [--clients 2] [--requests 2000]

First in process: median microseconds the audit hook adds to one request (policy
evaluation, RequestReceived and ResponseComplete events, JSON encoding, the batched file
write).  Then end to end: ``twistd platform-apiserver`` without auditing and with
``--audit-policy-file`` (one rule: Metadata) and ``--audit-log-path``; sequential GET
latency (median) and GET requests/s of ``--clients`` processes, side by side.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

from twisted.internet.task import Clock
from twisted.web.test.requesthelper import DummyRequest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import loadgen
from startup import free_port

from platform_api.apiserver.audit.hook import Auditor
from platform_api.apiserver.audit.logbackend import LogBackend
from platform_api.apiserver.audit.policy import load_bytes
from platform_api.apiserver.requestinfo import parse
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.context import Context

POLICY = b"apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"


def in_process(rounds: int = 20000) -> None:
    clock = Clock()
    path = os.path.join(loadgen.scratch_dir("auditbench-"), "audit.log")
    auditor = Auditor(load_bytes(POLICY), [LogBackend.open(path, "json", clock)], time.time)
    user = UserInfo("admin", groups=(MASTERS, "system:authenticated"))
    uri = "/api/v1/namespaces/default/configmaps/cm-0"
    info = parse(b"GET", uri, {})
    samples = []
    for _ in range(rounds):
        request = DummyRequest([b""])
        request.uri = uri.encode()
        request.code = 200  # type: ignore[attr-defined]
        request.setHeader(b"audit-id", b"5f0c6a9e-6a0e-4b1b-9d59-0d1c3c2f1a77")
        start = time.perf_counter()
        record = auditor.begin(request, info, user)
        assert record is not None
        record.attach(Context(user))
        request.write(b"{}")
        request.finish()
        clock.advance(0)  # the batched write (one per event pair here: the worst case)
        samples.append((time.perf_counter() - start) * 1e6)
    print(f"in process, Metadata level to a file: {statistics.median(samples):.1f} us/request")


def start_server(root: str, *flags: str) -> subprocess.Popen[bytes]:
    port = free_port()
    twistd = os.path.join(os.path.dirname(sys.executable), "twistd")
    cmd = [
        twistd, "--pidfile=", "-n", "--logfile", os.devnull, "platform-apiserver",
        "--data-dir", os.path.join(root, "data"), "--secure-port", str(port),
        "--bind-address", "127.0.0.1", *flags,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd)
    kubeconfig = os.path.join(root, "data", "admin.kubeconfig")
    deadline = time.monotonic() + 30
    while True:
        try:
            target = loadgen.from_kubeconfig(kubeconfig)
            if loadgen.request(target.connect(), target, "GET", "/version")[0] == 200:
                return proc
        except (OSError, KeyError, StopIteration, TypeError):
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("server did not start")
        time.sleep(0.05)


def measure(label: str, clients: int, per: int, *flags: str) -> tuple[float, float]:
    root = loadgen.scratch_dir("auditbench-")
    proc = start_server(root, *flags)
    try:
        admin = loadgen.from_kubeconfig(os.path.join(root, "data", "admin.kubeconfig"))
        conn = admin.connect()
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": loadgen.NAMESPACE}}
        loadgen.request(conn, admin, "POST", "/api/v1/namespaces", ns)
        names = [[f"cm-{c}"] for c in range(clients)]
        for group in names:
            loadgen.request(conn, admin, "POST", loadgen.BASE, loadgen.configmap(group[0]))
        p50, _ = loadgen.sequential_get(admin, "cm-0", per)
        run = loadgen.run_parallel(admin, "get", clients, per, names)
        rate, errors = run.rate, run.errors
        print(f"  {label:<28}{p50 * 1000:8.0f} us p50 {rate:8.0f} req/s   errors {errors}")
        return p50 * 1000, rate
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def end_to_end(clients: int, per: int, rounds: int) -> None:
    root = loadgen.scratch_dir("auditbench-")
    policy = os.path.join(root, "policy.yaml")
    with open(policy, "wb") as f:
        f.write(POLICY)
    print(f"end to end, sequential GET median and {clients} clients' GET req/s:")
    flags = (f"--audit-policy-file={policy}", f"--audit-log-path={os.path.join(root, 'a.log')}")
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(rounds):  # alternated, best of each: the machine may be shared
        runs[False].append(measure("no audit", clients, per))
        runs[True].append(measure("Metadata level, log file", clients, per, *flags))
    base = (min(r[0] for r in runs[False]), max(r[1] for r in runs[False]))
    audited = (min(r[0] for r in runs[True]), max(r[1] for r in runs[True]))
    print(
        f"  best of {rounds}: {base[0]:.0f} -> {audited[0]:.0f} us p50, "
        f"{base[1]:.0f} -> {audited[1]:.0f} req/s; "
        f"overhead {audited[0] - base[0]:+.0f} us per request, "
        f"{(audited[1] / base[1] - 1) * 100:+.1f}% req/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    in_process()
    end_to_end(args.clients, args.requests, args.rounds)


if __name__ == "__main__":
    main()
