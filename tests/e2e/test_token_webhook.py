"""The token webhook authenticator against the sample service, both as processes."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from platform_api.apiserver import pki
from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server

SELF = {"apiVersion": "authentication.platform.io/v1", "kind": "SelfSubjectReview"}
REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews"
LISTENING = re.compile(rb"serving on https://[\d.]+:(\d+)")


def start_sample(
    root: Path, certs: pki.Paths, plugin: str, *args: str, client_ca: bool = True
) -> tuple[subprocess.Popen[bytes], int]:
    """Start one of the sample webhook services on a free port; returns it and the port.
    With ``client_ca`` it answers only callers with a certificate of ``certs``' CA."""
    log = root / f"{plugin}.log"
    process = subprocess.Popen(
        [
            str(VENV_BIN / "twistd"),
            "--pidfile=",
            "-n",
            "--logfile",
            str(log),
            plugin,
            "--port",
            "0",
            "--tls-cert-file",
            certs.serving_cert,
            "--tls-private-key-file",
            certs.serving_key,
            *(["--client-ca-file", certs.ca_cert] if client_ca else []),
            *args,
        ],
        cwd=root,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        match = LISTENING.search(log.read_bytes() if log.exists() else b"")
        if match:
            return process, int(match.group(1))
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(log.read_text() if log.exists() else "webhook did not start")


def start_webhook(root: Path, certs: pki.Paths) -> tuple[subprocess.Popen[bytes], int]:
    users = root / "users.yaml"
    users.write_text(
        "users:\n- token: tok-jane\n  username: jane\n  uid: '7'\n  groups: [dev]\n"
        "  extra: {scopes: [read]}\n"
    )
    return start_sample(root, certs, "platform-token-webhook", "--users-file", str(users))


def webhook_kubeconfig(root: Path, certs: pki.Paths, port: int) -> Path:
    path = root / "webhook.kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster: {{server: "https://127.0.0.1:{port}/", certificate-authority: {certs.ca_cert}}}
users:
- name: api
  user: {{client-certificate: {certs.admin_cert}, client-key: {certs.admin_key}}}
contexts:
- name: hook
  context: {{cluster: hook, user: api}}
current-context: hook
"""
    )
    return path


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, subprocess.Popen[bytes]]]:
    root = tmp_path_factory.mktemp("webhook")
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    webhook, port = start_webhook(root, certs)
    config = webhook_kubeconfig(root, certs, port)
    server = start_server(
        root / "data",
        "--authentication-token-webhook-config-file",
        str(config),
        "--authentication-token-webhook-version",
        "v1",
    )
    yield server, webhook
    server.stop()
    if webhook.poll() is None:
        webhook.terminate()
        webhook.wait(timeout=10)


def test_webhook_tokens(servers: tuple[Server, subprocess.Popen[bytes]]) -> None:
    server, webhook = servers
    jane = session_for(server, token="tok-jane")
    r = jane.post(server.url + REVIEW, json=SELF)
    assert r.status_code == 201, r.text
    assert r.json()["status"]["userInfo"] == {
        "username": "jane",
        "uid": "7",
        "groups": ["dev", "system:authenticated"],
        "extra": {"scopes": ["read"]},
    }
    stranger = session_for(server, token="tok-unknown")
    r = stranger.post(server.url + REVIEW, json=SELF)
    assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized")

    # The webhook goes away: cached answers still hold, new tokens are 401, and
    # requests that do not need the webhook are unaffected.
    webhook.terminate()
    webhook.wait(timeout=10)
    assert jane.post(server.url + REVIEW, json=SELF).status_code == 201
    r = session_for(server, token="tok-new").post(server.url + REVIEW, json=SELF)
    assert r.status_code == 401
    admin = session_for(server, cert=server.admin_cert)
    assert admin.get(server.url + "/api/v1/namespaces").status_code == 200


def test_upstream_names_send_upstream_token_reviews(tmp_path: Path) -> None:
    """Under --serve-upstream-groups the sample webhook (a real process) is sent kube's
    authentication.k8s.io TokenReview and answers in kind."""
    certs = pki.ensure_pki(str(tmp_path / "hook-pki"), "127.0.0.1")
    webhook, port = start_webhook(tmp_path, certs)
    config = webhook_kubeconfig(tmp_path, certs, port)
    server = start_server(
        tmp_path / "data",
        "--serve-upstream-groups",
        "--authentication-token-webhook-config-file",
        str(config),
        "--authentication-token-webhook-version",
        "v1",
    )
    try:
        upstream = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        assert_jane(server, upstream, body)
    finally:
        stop_both(server, webhook)


def assert_jane(server: Server, path: str = REVIEW, body: dict | None = None) -> None:
    """The sample webhook's jane is who a SelfSubjectReview with her token finds."""
    r = session_for(server, token="tok-jane").post(server.url + path, json=body or SELF)
    assert r.status_code == 201, r.text
    assert r.json()["status"]["userInfo"]["username"] == "jane"


def stop_both(server: Server, webhook: subprocess.Popen[bytes]) -> None:
    server.stop()
    webhook.terminate()
    webhook.wait(timeout=10)


def test_bad_webhook_config_fails_at_start(tmp_path: Path) -> None:
    config = tmp_path / "hook.kubeconfig"
    config.write_text("clusters:\n- name: a\n  cluster: {server: 'http://insecure'}\n")
    with pytest.raises(RuntimeError) as failed:
        start_server(tmp_path / "data", "--authentication-token-webhook-config-file", str(config))
    assert "server must be an https URL" in str(failed.value)


def test_webhook_client_credentials_from_an_exec_plugin(tmp_path: Path) -> None:
    """The server's webhook connection gets its client certificate from a plugin."""
    certs = pki.ensure_pki(str(tmp_path / "hook-pki"), "127.0.0.1")
    webhook, port = start_webhook(tmp_path, certs)
    plugin = tmp_path / "bin" / "credential-plugin"
    plugin.parent.mkdir()
    plugin.write_text(
        f"""#!{sys.executable}
import json, os
info = json.loads(os.environ["PLATFORM_EXEC_INFO"])
assert info["spec"]["cluster"]["server"] == "https://127.0.0.1:{port}/"
print(json.dumps({{
    "apiVersion": info["apiVersion"], "kind": "ExecCredential",
    "status": {{
        "clientCertificateData": open({certs.admin_cert!r}).read(),
        "clientKeyData": open({certs.admin_key!r}).read(),
    }},
}}))
"""
    )
    plugin.chmod(0o755)
    config = tmp_path / "webhook.kubeconfig"
    config.write_text(
        f"""clusters:
- name: hook
  cluster: {{server: "https://127.0.0.1:{port}/", certificate-authority: {certs.ca_cert}}}
users:
- name: api
  user:
    exec:
      apiVersion: client.authentication.platform.io/v1
      command: ./bin/credential-plugin
      interactiveMode: Never
      provideClusterInfo: true
contexts:
- name: hook
  context: {{cluster: hook, user: api}}
current-context: hook
"""
    )
    server = start_server(
        tmp_path / "data", "--authentication-token-webhook-config-file", str(config)
    )
    try:
        assert_jane(server)
    finally:
        stop_both(server, webhook)
