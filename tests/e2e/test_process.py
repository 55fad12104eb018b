"""The server as a process: flags, the embedded PKI, restarts, two processes on one data dir."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server


def twistd(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(VENV_BIN / "twistd"), "--pidfile=", "-n", "platform-apiserver", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=30)


def test_help_lists_every_flag() -> None:
    out = subprocess.run(
        [str(VENV_BIN / "twistd"), "platform-apiserver", "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    for flag in (
        "--secure-port",
        "--bind-address",
        "--tls-cert-file",
        "--tls-private-key-file",
        "--cert-dir",
        "--client-ca-file",
        "--token-auth-file",
        "--anonymous-auth",
        "--authorization-mode",
        "--max-requests-inflight",
        "--request-timeout",
        "--livez-grace-period",
        "--shutdown-delay-duration",
        "--service-cluster-ip-range",
        "--data-dir",
        "--lmdb-map-size",
        "--feature-gates",
    ):
        assert flag in out, flag


def test_bad_flags_exit_with_one_line(tmp_path: Path) -> None:
    cases = {
        ("--no-such-flag",): "Error: unknown flag: --no-such-flag\n",
        (
            "--authorization-mode",
            "RBAC,Webhook,RBAC",
        ): 'Error: --authorization-mode: authorization mode "RBAC" has mentioned multiple times\n',
        (
            "--authorization-mode",
            "Bogus",
        ): 'Error: --authorization-mode: authorization mode "Bogus" is not a valid mode (valid modes: AlwaysAllow,AlwaysDeny,ABAC,RBAC,Node,Webhook)\n',
        (
            "--request-timeout",
            "soon",
        ): 'Error: invalid argument "soon" for "--request-timeout" flag: time: invalid duration "soon"\n',
        (
            "--tls-cert-file",
            "/etc/hostname",
        ): "Error: --tls-cert-file and --tls-private-key-file must be given together\n",
        ("--secure-port", "70000"): "Error: --secure-port must be between 0 and 65535, inclusive\n",
        (
            "--feature-gates",
            "AuthorizeWithSelectors=false",
        ): "Error: cannot set feature gate AuthorizeWithSelectors to false, feature is locked "
        "to true\n",
    }
    for args, expected in cases.items():
        result = twistd("--data-dir", str(tmp_path), *args)
        assert result.returncode == 1, args
        assert result.stderr == expected


def test_data_and_pki_survive_restart(fresh_server: Server) -> None:
    admin = session_for(fresh_server, cert=fresh_server.admin_cert)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "durable"},
        "data": {"x": "1"},
    }
    created = admin.post(
        fresh_server.url + "/api/v1/namespaces/default/configmaps", json=body
    ).json()
    ca_before = Path(fresh_server.ca).read_bytes()
    fresh_server.stop()
    again = start_server(fresh_server.data_dir)
    try:
        assert Path(again.ca).read_bytes() == ca_before
        admin = session_for(again, cert=again.admin_cert)
        got = admin.get(again.url + "/api/v1/namespaces/default/configmaps/durable").json()
        assert got == created
    finally:
        again.stop()


def test_the_servers_timers_run_on_the_monotonic_clock(fresh_server: Server) -> None:
    """A step of the machine's clock moves no watch timeout or request deadline
    (platform_api/timers.py): twistd names the reactor it runs."""
    assert fresh_server.log is not None
    log = fresh_server.log.read_text()
    assert "reactor class: platform_api.timers.MonotonicEPollReactor" in log


def test_two_processes_share_one_data_dir(fresh_server: Server) -> None:
    second = start_server(fresh_server.data_dir)
    try:
        one = session_for(fresh_server, cert=fresh_server.admin_cert)
        two = session_for(second, cert=second.admin_cert)
        base = "/api/v1/namespaces/default/configmaps"
        for i in range(20):
            target, url = (one, fresh_server.url) if i % 2 else (two, second.url)
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"shared-{i}"}}
            assert target.post(url + base, json=body).status_code == 201
        versions = set()
        for session, url in ((one, fresh_server.url), (two, second.url)):
            items = session.get(url + base).json()["items"]
            assert sorted(i["metadata"]["name"] for i in items) == sorted(
                f"shared-{i}" for i in range(20)
            )
            versions |= {i["metadata"]["resourceVersion"] for i in items}
        assert len(versions) == 20  # one global revision, no duplicates across processes
    finally:
        second.stop()


def test_token_file_authentication(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('secret-token,alice,uid-1,"dev,ops"\n')
    running = start_server(tmp_path / "data", "--token-auth-file", str(tokens))
    try:
        ok = session_for(running, token="secret-token")
        assert ok.get(running.url + "/api/v1/namespaces").status_code == 200
        bad = session_for(running, token="wrong")
        r = bad.get(running.url + "/api/v1/namespaces")
        assert r.status_code == 401 and r.json()["reason"] == "Unauthorized"
        # A bad token is 401 even on a path anonymous requests may use.
        assert bad.get(running.url + "/livez").status_code == 401
    finally:
        running.stop()


def test_always_deny_forbids_all_but_masters(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t1,carol,uid-2\n")
    running = start_server(
        tmp_path / "data", "--token-auth-file", str(tokens), "--authorization-mode", "AlwaysDeny"
    )
    try:
        carol = session_for(running, token="t1")
        r = carol.get(running.url + "/api/v1/namespaces/x/configmaps")
        assert r.status_code == 403
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'configmaps is forbidden: User "carol" cannot list resource "configmaps" in API group "" in the namespace "x": Everything is forbidden.',
            "reason": "Forbidden",
            "details": {"kind": "configmaps"},
            "code": 403,
        }
        admin = session_for(running, cert=running.admin_cert)
        assert admin.get(running.url + "/api/v1/namespaces").status_code == 200
        anonymous = session_for(running)
        assert anonymous.get(running.url + "/livez").status_code == 403
    finally:
        running.stop()


def test_client_certificate_from_unknown_ca_is_401(fresh_server: Server, tmp_path: Path) -> None:
    from platform_api.apiserver import pki

    other = pki.ensure_pki(str(tmp_path / "other"), "127.0.0.1")
    session = session_for(fresh_server, cert=(other.admin_cert, other.admin_key))
    r = session.get(fresh_server.url + "/api/v1/namespaces")
    assert r.status_code == 401


def test_readyz_fails_during_the_shutdown_delay(tmp_path: Path) -> None:
    running = start_server(tmp_path / "data", "--shutdown-delay-duration", "3s")
    anonymous = session_for(running)
    assert anonymous.get(running.url + "/readyz").status_code == 200
    running.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    r = anonymous.get(running.url + "/readyz?verbose")
    assert r.status_code == 503
    assert "[-]shutdown failed: reason withheld" in r.text and r.text.endswith(
        "readyz check failed\n"
    )
    assert anonymous.get(running.url + "/livez").status_code == 200  # still serving
    running.process.wait(timeout=15)


def test_a_second_stop_signal_ends_a_draining_server_at_once(tmp_path: Path) -> None:
    """kube-apiserver exits with status 1 on a second SIGINT or SIGTERM (a second
    Ctrl-C), rather than drain on; Twisted logged it as a critical traceback."""
    running = start_server(tmp_path / "data", "--shutdown-delay-duration", "30s")
    assert running.process is not None and running.log is not None
    running.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert session_for(running).get(running.url + "/readyz").status_code == 503  # draining
    started = time.monotonic()
    running.process.send_signal(signal.SIGINT)
    assert running.process.wait(timeout=10) == 1
    assert time.monotonic() - started < 5  # not the 30 s of the delay
    assert "Traceback" not in running.log.read_text()


def test_max_requests_inflight(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t1,dave,uid-3\n")
    running = start_server(  # max-in-flight limits only when APF is off (as in kube)
        tmp_path / "data",
        "--workers=1",  # one process's limit (each worker has its own, as each kube replica)
        "--token-auth-file",
        str(tokens),
        "--max-requests-inflight",
        "1",
        "--enable-priority-and-fairness=false",
    )
    try:
        dave = session_for(running, token="t1")
        # A read of a revision the server has not reached holds its slot for ~3 s.
        slow = threading.Thread(
            target=lambda: dave.get(running.url + "/api/v1/namespaces?resourceVersion=99999999")
        )
        slow.start()
        time.sleep(0.5)
        r = session_for(running, token="t1").get(running.url + "/api/v1/namespaces")
        # kube's max-in-flight filter answers with http.Error's plain text, not a Status.
        assert r.status_code == 429
        assert r.headers["Retry-After"] == "1"
        assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Cache-Control"] == "no-cache, private"
        assert r.text == "Too many requests, please try again later.\n"
        admin = session_for(running, cert=running.admin_cert)
        assert (
            admin.get(running.url + "/api/v1/namespaces").status_code == 200
        )  # masters are exempt
        slow.join()
    finally:
        running.stop()


def test_a_server_that_fails_to_start_exits(tmp_path: Path) -> None:
    """An unreadable serving certificate fails the start after storage is open: the LMDB
    writer's thread must not keep the process alive (it hung in interpreter shutdown)."""
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("garbage\n")
    pem = str(garbage)
    started = time.monotonic()
    result = twistd(
        "--data-dir", str(tmp_path / "data"), "--secure-port", "0",
        "--tls-cert-file", pem, "--tls-private-key-file", pem,
    )  # fmt: skip
    assert result.returncode == 1
    assert time.monotonic() - started < 15
