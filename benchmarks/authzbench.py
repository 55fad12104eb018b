"""Authorization cost: RBAC with 1,000 roles and 1,000 bindings.

    python benchmarks/authzbench.py [--objects 1000] [--clients 8]

First in process: median microseconds the authorizer chain adds to a request, for a
user whose one binding is among the 1,000 (served from the per-user rule cache, and
with the cache emptied before every decision, as after any RBAC change), and for a
``system:masters`` member.  Then end to end: ``twistd platform-apiserver
--authorization-mode RBAC`` with the same objects, GET requests/s of the RBAC-limited
user (token) against the admin (client certificate, ``system:masters``), side by side.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

from twisted.internet.defer import ensureDeferred, succeed
from twisted.internet.task import Clock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import loadgen
from startup import free_port

from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes
from platform_api.authorization.rbac.authorizer import RBACAuthorizer
from platform_api.authorization.rbac.index import GROUP, RuleIndex, prefix_of
from platform_api.authorization.union import AuthorizerUnion, PrivilegedGroups
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub

RULES = [
    {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "update"]},
]


def objects(count: int, namespace: str) -> list[tuple[str, dict[str, Any]]]:
    """``count`` Roles and RoleBindings, one user each; user-0 reads configmaps in ``namespace``."""
    out = []
    for i in range(count):
        meta = {"name": f"role-{i}", "namespace": namespace}
        out.append(
            (
                "roles",
                {"apiVersion": f"{GROUP}/v1", "kind": "Role", "metadata": meta, "rules": RULES},
            )
        )
        binding = {
            "apiVersion": f"{GROUP}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"bind-{i}", "namespace": namespace},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": f"role-{i}"},
            "subjects": [{"kind": "User", "apiGroup": GROUP, "name": f"user-{i}"}],
        }
        out.append(("rolebindings", binding))
    return out


def in_process(count: int, rounds: int = 20000) -> None:
    path = loadgen.scratch_dir("authzbench-")
    storage = LMDBStorage(open_environment(path, 256 * 2**20), lambda w: succeed(w()))
    hub = WatchHub(storage, Clock())
    for plural, obj in objects(count, "bench"):
        key = prefix_of(plural) + f"bench\x00{obj['metadata']['name']}".encode()
        ensureDeferred(storage.create(key, obj))
    index = RuleIndex(storage, hub)
    index.start()
    chain = AuthorizerUnion([PrivilegedGroups(), RBACAuthorizer(index)])
    user = UserInfo("user-500", groups=("system:authenticated",))
    admin = UserInfo("admin", groups=(MASTERS, "system:authenticated"))

    def median_us(who: UserInfo, cold: bool) -> float:
        attrs = Attributes(
            user=who,
            verb="get",
            resource_request=True,
            namespace="bench",
            api_version="v1",
            resource="configmaps",
            name="x",
        )
        samples = []
        for _ in range(rounds):
            if cold:
                index._cache.clear()
            start = time.perf_counter()
            d = ensureDeferred(chain.authorize(attrs))
            samples.append((time.perf_counter() - start) * 1e6)
            assert d.called
        return statistics.median(samples)

    print(f"in process, {count} roles + {count} bindings (median per decision):")
    print(f"  RBAC user, cached rules     {median_us(user, False):8.1f} us")
    print(f"  RBAC user, cache emptied    {median_us(user, True):8.1f} us")
    print(f"  system:masters              {median_us(admin, False):8.1f} us")


def start_server(root: str, tokens: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    twistd = os.path.join(os.path.dirname(sys.executable), "twistd")
    cmd = [
        twistd, "--pidfile=", "-n", "--logfile", os.devnull, "platform-apiserver",
        "--data-dir", os.path.join(root, "data"), "--secure-port", str(port),
        "--bind-address", "127.0.0.1", "--authorization-mode", "RBAC",
        "--token-auth-file", tokens,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd)
    kubeconfig = os.path.join(root, "data", "admin.kubeconfig")
    deadline = time.monotonic() + 30
    while True:
        try:
            target = loadgen.from_kubeconfig(kubeconfig)
            if loadgen.request(target.connect(), target, "GET", "/version")[0] == 200:
                return proc, port
        except (OSError, KeyError, StopIteration, TypeError):
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("server did not start")
        time.sleep(0.05)


def end_to_end(count: int, clients: int) -> None:
    root = loadgen.scratch_dir("authzbench-")
    tokens = os.path.join(root, "tokens.csv")
    with open(tokens, "w") as f:
        f.write("t-limited,user-0,u0\n")
    proc, _port = start_server(root, tokens)
    try:
        admin = loadgen.from_kubeconfig(os.path.join(root, "data", "admin.kubeconfig"))
        conn = admin.connect()
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": loadgen.NAMESPACE}}
        assert loadgen.request(conn, admin, "POST", "/api/v1/namespaces", ns)[0] == 201
        base = f"/apis/{GROUP}/v1/namespaces/{loadgen.NAMESPACE}/"
        for plural, obj in objects(count, loadgen.NAMESPACE):
            status, body = loadgen.request(conn, admin, "POST", base + plural, obj)
            assert status == 201, body
        names = [[f"cm-{c}" for _ in range(1)] for c in range(clients)]
        for group in names:
            loadgen.request(conn, admin, "POST", loadgen.BASE, loadgen.configmap(group[0]))
        limited = loadgen.Target(
            admin.host, admin.port, admin.ca, None, None, "t-limited", admin.insecure
        )
        time.sleep(1)  # the index has the last binding
        assert loadgen.request(limited.connect(), limited, "GET", f"{loadgen.BASE}/cm-0")[0] == 200
        per = 1500
        print(f"end to end, {count} roles + {count} bindings, {clients} clients, GET:")
        for label, target in (("RBAC-limited user", limited), ("system:masters", admin)):
            run = loadgen.run_parallel(target, "get", clients, per, names)
            rate, errors = run.rate, run.errors
            print(f"  {label:<26}{rate:8.0f} req/s   errors {errors}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    in_process(args.objects)
    end_to_end(args.objects, args.clients)


if __name__ == "__main__":
    main()
