"""Concurrent patches of every type never lose an update (the store's CAS loop)."""

from __future__ import annotations

import threading

import pytest
import requests

from tests.e2e.conftest import Server
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


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_concurrent_patches(server: Server, admin: requests.Session, kind: str) -> None:
    media, body = KINDS[kind]
    base = server.url + make_namespace(admin, server, f"race-{kind}")
    seed = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r"}, "data": {}}
    assert admin.post(base, json=seed).status_code == 201
    codes: list[int] = []

    def worker(i: int) -> None:
        session = requests.Session()
        session.trust_env = False
        session.verify, session.cert = admin.verify, admin.cert
        for j in range(10):
            r = session.patch(base + "/r", json=body(i, j), headers={"Content-Type": media})
            codes.append(r.status_code)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(codes) == {200}
    final = admin.get(base + "/r").json()
    written = final["metadata"].get("labels", {}) if kind == "strategic" else final["data"]
    assert set(written) == {f"k{i}-{j}" for i in range(8) for j in range(10)}
