"""ApiServer: start, stop, connect to a running server, and its admin helpers."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from platform_api.testing import ApiServer

pytestmark = pytest.mark.e2e


def test_the_session_server(platform_apiserver: ApiServer) -> None:
    assert re.fullmatch(r"https://127\.0\.0\.1:\d+", platform_apiserver.base_url)
    assert platform_apiserver.port == int(platform_apiserver.base_url.rsplit(":", 1)[1])
    assert platform_apiserver.kubeconfig.is_file()
    assert Path(platform_apiserver.ca).is_file()
    assert platform_apiserver.admin_cert is not None
    assert all(Path(p).is_file() for p in platform_apiserver.admin_cert)
    assert platform_apiserver.request("GET", "/readyz") == (200, "ok")
    status, review = platform_apiserver.request(
        "POST",
        "/apis/authentication.platform.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"},
    )
    assert status == 201
    assert review["status"]["userInfo"]["username"] == "platform-admin"


def test_namespace_fixture(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    assert re.fullmatch(r"test-namespace-fixture-[0-9a-f]{6}", platform_namespace)
    status, namespace = platform_apiserver.request(
        "GET", f"/api/v1/namespaces/{platform_namespace}"
    )
    assert status == 200
    assert namespace["status"]["phase"] == "Active"


def test_delete_namespace_does_not_wait(platform_apiserver: ApiServer) -> None:
    platform_apiserver.create_namespace("doomed", labels={"purpose": "test"})
    platform_apiserver.delete_namespace("doomed")
    status, namespace = platform_apiserver.request("GET", "/api/v1/namespaces/doomed")
    assert status == 404 or namespace["status"]["phase"] == "Terminating"
    platform_apiserver.delete_namespace("doomed")  # gone or going: not an error


def test_create_namespace_reports_the_server_error(platform_apiserver: ApiServer) -> None:
    with pytest.raises(RuntimeError) as failed:
        platform_apiserver.create_namespace("Not_Valid")
    assert str(failed.value).startswith(
        'creating namespace Not_Valid: 422 Namespace "Not_Valid" is invalid: metadata.name: '
        'Invalid value: "Not_Valid": a lowercase RFC 1123 label must consist of'
    )


def test_kubectl(platform_apiserver: ApiServer, platform_namespace: str) -> None:
    result = platform_apiserver.kubectl("get", "namespace", platform_namespace, "-o", "name")
    assert result.stdout == f"namespace/{platform_namespace}\n"


def test_connect_to_a_running_server(platform_apiserver: ApiServer, tmp_path: Path) -> None:
    external = ApiServer.connect(platform_apiserver.kubeconfig, tmp_path / "creds")
    assert external.base_url == platform_apiserver.base_url
    assert external.process is None and external.data_dir is None
    assert Path(external.ca).read_bytes() == Path(platform_apiserver.ca).read_bytes()
    assert external.admin_cert == (
        str(tmp_path / "creds/admin.crt"),
        str(tmp_path / "creds/admin.key"),
    )
    assert external.request("GET", "/api/v1/namespaces/default")[0] == 200
    external.stop()  # not ours to stop
    assert platform_apiserver.request("GET", "/readyz")[0] == 200


def test_connect_with_a_token(platform_apiserver: ApiServer, tmp_path: Path) -> None:
    path = tmp_path / "token.kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{platform_apiserver.base_url}", certificate-authority: {platform_apiserver.ca}}}}}]
users: [{{name: u, user: {{token: not-a-valid-token}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""
    )
    external = ApiServer.connect(path, tmp_path / "creds")
    assert external.admin_cert is None and external.token == "not-a-valid-token"
    status, body = external.request("GET", "/api/v1/namespaces")
    assert (status, body["message"]) == (401, "Unauthorized")


def test_start_and_stop(tmp_path: Path) -> None:
    server = ApiServer.start(tmp_path / "data")
    assert server.process is not None and server.log is not None
    assert server.request("GET", "/livez")[0] == 200
    assert (tmp_path / "data" / "admin.kubeconfig") == server.kubeconfig
    server.stop()
    assert server.process.returncode == -signal.SIGTERM  # twistd ends by its signal
    assert "Received SIGTERM, shutting down." in server.log.read_text()
    server.stop()  # already stopped: nothing to do


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as failed:
        ApiServer.start(tmp_path / "data", "--secure-port-typo", "1")
    assert str(failed.value) == "server exited early (1): Error: unknown flag: --secure-port-typo\n"


def gone(pid: int) -> bool:
    """No such process, or only its zombie (reaped by whoever adopted it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def test_the_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """Linux only (PR_SET_PDEATHSIG), as every machine of this project is."""
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from platform_api.testing import ApiServer;"
            "s = ApiServer.start(Path(sys.argv[1])); print(s.process.pid, flush=True); time.sleep(60)",
            str(tmp_path / "data"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert starter.stdout is not None
    pid = int(starter.stdout.readline())
    assert not gone(pid)
    starter.kill()  # no chance to clean up
    starter.wait()
    deadline = time.monotonic() + 10
    while not gone(pid):
        assert time.monotonic() < deadline, "the server outlived its starter"
        time.sleep(0.05)
