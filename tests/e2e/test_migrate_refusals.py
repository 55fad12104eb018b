"""``scripts/migrate-storage`` refusing what it cannot copy: one line on stderr, exit 1,
and nothing written or made (the copy itself: test_etcd_operations.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ON_LMDB, session_for, start_server
from tests.storage.etcd_server import EtcdServer

REFUSED = 1


def migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "platform_api.storage.migrate", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_source_with_no_data_is_refused_and_not_made(tmp_path: Path) -> None:
    source = tmp_path / "typo"
    done = migrate("--from", str(source), "--to", "http://127.0.0.1:1")
    assert (done.returncode, done.stdout) == (REFUSED, "")
    assert (
        done.stderr == f"migrate-storage: {source}: not a data directory (it has no db/data.mdb)\n"
    )
    assert not source.exists()


def test_an_etcd_that_does_not_answer_is_one_line_and_makes_no_directory(tmp_path: Path) -> None:
    target = tmp_path / "copy"
    done = migrate("--from", "http://127.0.0.1:1", "--to", str(target))
    assert (done.returncode, done.stdout) == (REFUSED, "")
    assert done.stderr.startswith(
        "migrate-storage: no etcd endpoint answered: failed to connect to http://127.0.0.1:1: "
    )
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not target.exists()


def test_a_data_directory_a_server_runs_on_is_not_written(tmp_path: Path, etcd: EtcdServer) -> None:
    etcd.put("/running/configmaps/default/from-etcd", b'{"kind":"ConfigMap"}')
    server = start_server(tmp_path / "data", ON_LMDB)
    try:
        done = migrate(
            "--from", etcd.endpoint, "--to", str(tmp_path / "data"), "--etcd-prefix", "/running"
        )
        assert (done.returncode, done.stdout) == (REFUSED, "")
        assert done.stderr == (
            f"migrate-storage: {tmp_path / 'data'}: a server is running on it; stop it first\n"
        )
        session = session_for(server, cert=server.admin_cert)
        url = f"{server.base_url}/api/v1/namespaces/default/configmaps/from-etcd"
        assert session.get(url).status_code == 404
    finally:
        server.stop()
    # Once it is stopped, the same copy goes through.
    done = migrate(
        "--from", etcd.endpoint, "--to", str(tmp_path / "data"), "--etcd-prefix", "/running"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "copied 1 objects; 0 already present, left as they are\n"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (b"k8s\x00not protobuf", "not an object (proto: illegal wireType 6)"),
        # as the server answers a read of it: kube's last, base64-wrapped storage decoder
        (b"just words", "not an object (illegal base64 data at input byte 4)"),
    ],
)
def test_a_value_that_is_no_object_is_named_and_nothing_is_copied(
    tmp_path: Path, etcd: EtcdServer, value: bytes, why: str
) -> None:
    prefix = f"/broken-{tmp_path.name}"
    etcd.put(f"{prefix}/configmaps/default/a-good", b'{"kind":"ConfigMap"}')
    etcd.put(f"{prefix}/configmaps/default/b-bad", value)
    target = tmp_path / "copy"
    done = migrate("--from", etcd.endpoint, "--to", str(target), "--etcd-prefix", prefix)
    assert (done.returncode, done.stdout) == (REFUSED, "")
    assert done.stderr == f"migrate-storage: {prefix}/configmaps/default/b-bad: {why}\n"
    # One transaction: the good object before it was not kept either.
    server = start_server(target)
    try:
        session = session_for(server, cert=server.admin_cert)
        url = f"{server.base_url}/api/v1/namespaces/default/configmaps/a-good"
        assert session.get(url).status_code == 404
    finally:
        server.stop()


def test_an_etcd_url_no_client_could_dial_is_a_usage_error(tmp_path: Path) -> None:
    done = migrate("--from", "http://127.0.0.1:99999", "--to", str(tmp_path / "copy"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        "migrate.py: error: http://127.0.0.1:99999: Port out of range 0-65535\n"
    )
    assert not (tmp_path / "copy").exists()
