"""--authorization-config against the sample authorization webhook, both as processes:
answers, match conditions, the failure policy, reloads, and the flags it excludes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.test_authz_webhook import start_authz_webhook, stop_webhook
from tests.e2e.test_process import twistd

POLICY = """rules:
- user: carol
  verb: list
  resource: configmaps
  decision: allow
- user: carol
  nonResourcePath: /version
  decision: allow
- user: system:probe
  decision: allow
- user: dave
  decision: deny
  reason: dave is suspended
"""
NOT_SYSTEM = "!request.user.startsWith('system:')"
RESOURCES = "has(request.resourceAttributes)"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def config(kubeconfig: Path, *conditions: str) -> str:
    listed = "".join(f"    - expression: {c!r}\n" for c in conditions)
    return f"""apiVersion: apiserver.config.platform.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: sample
  webhook:
    timeout: 5s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: {kubeconfig}
    matchConditions:
{listed}"""


def forbidden(message: str, kind: str = "configmaps") -> dict[str, Any]:
    return status(403, "Forbidden", message, {"kind": kind} if kind else {})


def configmaps_message(user: str, reason: str = "") -> str:
    text = (
        f'configmaps is forbidden: User "{user}" cannot list resource "configmaps" in API '
        'group "" in the namespace "default"'
    )
    return f"{text}: {reason}" if reason else text


def get(server: Server, token: str, path: str) -> requests.Response:
    return session_for(server, token=token).get(server.url + path)


def wait_for(server: Server, token: str, path: str, code: int) -> requests.Response:
    """Poll until the server answers ``code`` (a reload is picked up within seconds)."""
    deadline = time.monotonic() + 20
    while True:
        reply = get(server, token, path)
        if reply.status_code == code or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


def test_authorization_config_with_the_sample_webhook(tmp_path: Path) -> None:
    users = "carol dave erin system:probe"
    webhook, kubeconfig, tokens = start_authz_webhook(tmp_path, POLICY, users)
    path = tmp_path / "authz.yaml"
    path.write_text(config(kubeconfig, NOT_SYSTEM, RESOURCES))
    server = start_server(  # one decision cache: each worker keeps its own, as each replica
        tmp_path / "data",
        "--workers=1",
        "--authorization-config",
        str(path),
        "--token-auth-file",
        str(tokens),
    )
    try:
        assert get(server, "t-carol", CONFIGMAPS).status_code == 200
        # The webhook denies, or has no opinion (and nothing else allows).
        r = get(server, "t-dave", CONFIGMAPS)
        assert (r.status_code, r.json()) == (
            403,
            forbidden(configmaps_message("dave", "dave is suspended")),
        )
        r = get(server, "t-erin", CONFIGMAPS)
        assert (r.status_code, r.json()) == (403, forbidden(configmaps_message("erin")))
        # Skipped by a match condition: the webhook would have allowed these.
        r = get(server, "t-system:probe", CONFIGMAPS)
        assert (r.status_code, r.json()) == (403, forbidden(configmaps_message("system:probe")))
        r = get(server, "t-carol", "/version")
        assert (r.status_code, r.json()) == (
            403,
            forbidden('forbidden: User "carol" cannot get path "/version"', kind=""),
        )
        # The file changes: the new conditions apply without a restart.
        path.write_text(config(kubeconfig, "request.user != 'dave'"))
        assert wait_for(server, "t-system:probe", CONFIGMAPS, 200).status_code == 200
        assert get(server, "t-carol", "/version").status_code == 200
        assert get(server, "t-carol", CONFIGMAPS).status_code == 200  # the new chain's cache
        r = get(server, "t-dave", CONFIGMAPS)  # skipped now: no opinion, no reason
        assert (r.status_code, r.json()) == (403, forbidden(configmaps_message("dave")))
        # The webhook goes away: failurePolicy Deny refuses what is not cached.
        stop_webhook(webhook)
        assert get(server, "t-carol", CONFIGMAPS).status_code == 200  # still cached
        r = get(server, "t-erin", "/api/v1/namespaces")
        assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
        assert r.json()["message"].startswith(
            'namespaces is forbidden: User "erin" cannot list resource "namespaces" in API '
            'group "" at the cluster scope: webhook authorizer failed: '
        )
        admin = session_for(server, cert=server.admin_cert)
        assert admin.get(server.url + "/api/v1/namespaces").status_code == 200
    finally:
        server.stop()
        stop_webhook(webhook)


def test_authorization_config_excludes_the_legacy_flags(tmp_path: Path) -> None:
    path = tmp_path / "authz.yaml"
    path.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: AuthorizationConfiguration\n"
        "authorizers: [{type: AlwaysDeny, name: alwaysdeny}]\n"
    )
    message = (
        "Error: --authorization-config can not be specified when --authorization-mode or "
        "--authorization-webhook-* flags are defined\n"
    )
    for flag, value in (
        ("--authorization-mode", "AlwaysAllow"),
        ("--authorization-webhook-version", "v1"),
        ("--authorization-webhook-cache-authorized-ttl", "1m"),
    ):
        result = twistd(
            "--data-dir", str(tmp_path), "--authorization-config", str(path), flag, value
        )
        assert (result.returncode, result.stderr) == (1, message)
    path.write_text(
        "apiVersion: apiserver.config.platform.io/v1\nkind: AuthorizationConfiguration\n"
        "authorizers: [{type: AlwaysDeny, name: deny}]\n"
    )
    result = twistd("--data-dir", str(tmp_path), "--authorization-config", str(path))
    assert (result.returncode, result.stderr) == (
        1,
        "Error: expected name alwaysdeny for authorizer AlwaysDeny instead of deny\n",
    )
