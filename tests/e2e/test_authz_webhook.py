"""Webhook authorization against the sample authorization service, both as processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from platform_api.apiserver import pki
from tests.e2e.conftest import session_for, start_server
from tests.e2e.test_token_webhook import start_sample, webhook_kubeconfig

POLICY = """rules:
- user: carol
  verb: list
  resource: configmaps
  decision: allow
- user: dave
  decision: deny
  reason: dave is suspended
"""


def start_authz_webhook(
    root: Path, policy: str, users: str
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """The sample authorization webhook with ``policy``, its kubeconfig, and a token file
    for ``users`` (``t-<user>`` is each one's token)."""
    certs = pki.ensure_pki(str(root / "hook-pki"), "127.0.0.1")
    policy_file = root / "policy.yaml"
    policy_file.write_text(policy)
    webhook, port = start_sample(
        root, certs, "platform-authz-webhook", "--policy-file", str(policy_file)
    )
    tokens = root / "tokens.csv"
    tokens.write_text("".join(f"t-{u},{u},{i}\n" for i, u in enumerate(users.split(), 1)))
    return webhook, webhook_kubeconfig(root, certs, port), tokens


def stop_webhook(webhook: subprocess.Popen[bytes]) -> None:
    if webhook.poll() is None:
        webhook.terminate()
        webhook.wait(timeout=10)


def test_webhook_authorizer(tmp_path: Path) -> None:
    webhook, kubeconfig, tokens = start_authz_webhook(tmp_path, POLICY, "carol dave erin")
    server = start_server(  # one decision cache: each worker keeps its own, as each replica
        tmp_path / "data",
        "--workers=1",
        "--authorization-mode",
        "Webhook",
        "--authorization-webhook-config-file",
        str(kubeconfig),
        "--authorization-webhook-version",
        "v1",
        "--token-auth-file",
        str(tokens),
    )
    url = server.url + "/api/v1/namespaces/default/configmaps"
    try:
        assert session_for(server, token="t-carol").get(url).status_code == 200
        r = session_for(server, token="t-dave").get(url)
        assert (r.status_code, r.json()["message"]) == (
            403,
            'configmaps is forbidden: User "dave" cannot list resource "configmaps" in API '
            'group "" in the namespace "default": dave is suspended',
        )
        assert session_for(server, token="t-erin").get(url).status_code == 403
        # The webhook goes away: cached answers hold, new questions are refused.
        stop_webhook(webhook)
        assert session_for(server, token="t-carol").get(url).status_code == 200
        r = session_for(server, token="t-carol").get(server.url + "/api/v1/namespaces")
        assert r.status_code == 403
        assert "webhook authorizer failed" in r.json()["message"]
        admin = session_for(server, cert=server.admin_cert)
        assert admin.get(server.url + "/api/v1/namespaces").status_code == 200
    finally:
        server.stop()
        stop_webhook(webhook)
