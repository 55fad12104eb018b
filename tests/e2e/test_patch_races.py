"""Concurrent patches of every type never lose an update (the store's CAS loop)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import requests

from tests.e2e.conftest import Server, session_for
from tests.e2e.test_list import make_namespace

KINDS = {
    "merge": ("application/merge-patch+json", lambda i, j: {"data": {f"k{i}-{j}": "v"}}),
    "strategic": (
        "application/strategic-merge-patch+json",
        lambda i, j: {"metadata": {"labels": {f"k{i}-{j}": "v"}}},
    ),
    "json": (
        "application/json-patch+json",
        lambda i, j: [{"op": "add", "path": f"/data/k{i}-{j}", "value": "v"}],
    ),
}


def in_parallel(
    server: Server, clients: int, work: Callable[[requests.Session, int], None]
) -> None:
    """Run ``work(session, i)`` in ``clients`` threads, each with its own connection."""

    def run(i: int) -> None:
        work(session_for(server, cert=server.admin_cert), i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_concurrent_patches(server: Server, admin: requests.Session, kind: str) -> None:
    media, body = KINDS[kind]
    base = server.url + make_namespace(admin, server, f"race-{kind}")
    # A key of its own: an empty map is not stored (Go's omitempty), and a JSON patch
    # adding under /data then fails with 422, as kube's does.
    seed = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r"}, "data": {"s": "v"}}
    assert admin.post(base, json=seed).status_code == 201
    codes: list[int] = []

    def worker(session: requests.Session, i: int) -> None:
        for j in range(10):
            r = session.patch(base + "/r", json=body(i, j), headers={"Content-Type": media})
            codes.append(r.status_code)

    in_parallel(server, 8, worker)
    assert set(codes) == {200}
    final = admin.get(base + "/r").json()
    written = final["metadata"].get("labels", {}) if kind == "strategic" else final["data"]
    assert set(written) - {"s"} == {f"k{i}-{j}" for i in range(8) for j in range(10)}
