"""Storage faults on a real server: a full LMDB map, a full disk, kill -9 during group commit."""

from __future__ import annotations

import json
import os
import random
import re
import resource
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import unknown
from tests.e2e.conftest import ON_LMDB, Server, kubectl_available, session_for, start_server
from tests.polling import process_ended

CM = "/api/v1/namespaces/default/configmaps"


def config_map(name: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"x": "y" * size},
    }


def fill(
    server: Server, admin: requests.Session, size: int = 100_000
) -> tuple[int, requests.Response]:
    """Create config maps until one is refused; how many were created, and the refusal."""
    for i in range(1000):
        r = admin.post(server.url + CM, json=config_map(f"fill-{i}", size))
        if r.status_code != 201:
            return i, r
    raise AssertionError("never full")


@pytest.mark.slow
def test_full_map_answers_etcds_no_space_and_keeps_reads_and_deletes(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", ON_LMDB, "--lmdb-map-size=2Mi")
    try:
        admin = session_for(server, cert=server.admin_cert)
        created, refused = fill(server, admin)
        full = "etcdserver: mvcc: database space exceeded (--lmdb-map-size=2Mi)"
        assert created >= 3  # (the defaults, 135 RBAC objects among them, take the rest)
        assert refused.status_code == 500
        assert refused.json() == unknown(full)
        # Reads work and see every acknowledged write.
        got = admin.get(server.url + CM + "/fill-0")
        assert got.status_code == 200 and len(got.json()["data"]["x"]) == 100_000
        names = {i["metadata"]["name"] for i in admin.get(server.url + CM).json()["items"]}
        assert names == {f"fill-{i}" for i in range(created)}
        # Updates are refused the same way (one that grows: a shrunken value may fit in
        # pages the change log's trimming freed meanwhile); deletes run in the reserve.
        patch = admin.patch(
            server.url + CM + "/fill-1",
            json={"data": {"x": "z" * 150_000}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert (patch.status_code, patch.json()) == (500, unknown(full))
        if kubectl_available():
            big = tmp_path / "big"
            big.write_text("y" * 100_000)
            out = server.kubectl("create", "configmap", "k", f"--from-file=k={big}", check=False)
            assert out.returncode == 1
            assert out.stderr.strip() == f"error: failed to create configmap: {full}"
        deleted = admin.delete(server.url + CM + "/fill-0")
        assert deleted.status_code == 200
        assert admin.get(server.url + CM + "/fill-0").status_code == 404
        # LMDB hands out the pages a transaction freed two transactions later: the
        # next write after one delete may still find none (as luck of layout has it).
        assert admin.delete(server.url + CM + "/fill-2").status_code == 200
        small = admin.post(server.url + CM, json=config_map("small", 10))
        assert small.status_code == 201  # what fits in the freed pages is taken
    finally:
        server.stop()
    # A restart with the same ceiling comes up, then a larger one takes writes again.
    again = start_server(tmp_path / "data", ON_LMDB, "--lmdb-map-size=2Mi")
    try:
        admin = session_for(again, cert=again.admin_cert)
        assert admin.get(again.url + CM + "/fill-1").status_code == 200
    finally:
        again.stop()
    larger = start_server(tmp_path / "data", ON_LMDB, "--lmdb-map-size=16Mi")
    try:
        admin = session_for(larger, cert=larger.admin_cert)
        r = admin.post(larger.url + CM, json=config_map("after", 100_000))
        assert r.status_code == 201
    finally:
        larger.stop()


@pytest.fixture
def one_writer(tmp_path: Path) -> Iterator[Server]:
    """A server with one LMDB writer process (under --workers each worker has its own)."""
    running = start_server(tmp_path / "data", ON_LMDB, "--workers=1")
    yield running
    running.stop()


def writer_process(server_pid: int) -> int:
    """The server's LMDB writer process (platform_api/storage/lmdb_writer.py)."""
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    for child in children:
        if b"lmdb_writer" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    raise AssertionError(f"no writer process among {children}")


def test_full_disk_names_the_cause_and_the_next_write_succeeds(one_writer: Server) -> None:
    server = one_writer
    assert server.process is not None and server.data_dir is not None
    admin = session_for(server, cert=server.admin_cert)
    data = server.data_dir / "db" / "data.mdb"
    pid = writer_process(server.process.pid)  # the process that writes data.mdb
    soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    limit = data.stat().st_size + 300_000
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))  # Python ignores SIGXFSZ
    try:
        created, refused = fill(server, admin)
        assert refused.status_code == 500
        body = refused.json()
        assert body == unknown(body["message"])
        assert re.fullmatch(
            rf"database write failed: mdb_txn_commit: (Input/output error|File too large): "
            rf"{re.escape(str(data))} reached the file size limit \(RLIMIT_FSIZE={limit}\)",
            body["message"],
        ), body["message"]
        assert admin.get(server.url + CM + "/fill-0").status_code == 200
        assert len(admin.get(server.url + CM).json()["items"]) == created
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))
    r = admin.post(server.url + CM, json=config_map("after-space-returns", 100_000))
    assert r.status_code == 201


@pytest.mark.slow
def test_kill_9_during_group_commit_loses_no_acknowledged_write(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data")
    acknowledged: dict[str, str] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(n: int) -> None:
        session = session_for(server, cert=server.admin_cert)
        i = 0
        while not stop.is_set():
            name = f"w{n}-{i}"
            i += 1
            try:
                r = session.post(server.url + CM, json=config_map(name, 2000), timeout=10)
            except requests.RequestException:
                return  # the server is gone: this write may or may not have committed
            if r.status_code == 201:
                with lock:
                    acknowledged[name] = r.json()["metadata"]["resourceVersion"]

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    time.sleep(random.uniform(1.0, 2.5))
    assert server.process is not None
    server.process.send_signal(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    server.process.wait()
    server.stop()
    assert len(acknowledged) > 20, "the writers never got going"
    again = start_server(tmp_path / "data")
    try:
        admin = session_for(again, cert=again.admin_cert)
        items = admin.get(again.url + CM).json()["items"]
        stored = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in items}
        missing = {n: rv for n, rv in acknowledged.items() if stored.get(n) != rv}
        assert not missing
    finally:
        again.stop()


def test_a_killed_writer_process_is_replaced_and_watchers_miss_nothing(
    one_writer: Server,
) -> None:
    server = one_writer
    assert server.process is not None
    admin = session_for(server, cert=server.admin_cert)
    first = admin.post(server.url + CM, json=config_map("before-kill", 10))
    assert first.status_code == 201
    since = first.json()["metadata"]["resourceVersion"]
    watch = admin.get(
        server.url + CM, params={"watch": "1", "resourceVersion": since}, stream=True, timeout=30
    )
    writer = writer_process(server.process.pid)
    os.kill(writer, signal.SIGKILL)
    # Once the process is gone (a write sent into its pipe before it ends is answered as
    # lost, a 500), one written while the new process starts waits for it, and lands.
    deadline = time.monotonic() + 30
    while not process_ended(writer) and time.monotonic() < deadline:
        time.sleep(0.005)
    r = admin.post(server.url + CM, json=config_map("after-kill", 10))
    assert r.status_code == 201
    assert writer_process(server.process.pid) != writer
    lines = watch.iter_lines()
    event = json.loads(next(lines))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after-kill")
    watch.close()
    assert admin.get(server.url + "/readyz").status_code == 200
    assert admin.get(server.url + CM + "/before-kill").status_code == 200
