"""Webhook authorization against the sample authorization service, both as processes."""

from __future__ import annotations

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


def test_webhook_authorizer(tmp_path: Path) -> None:
    certs = pki.ensure_pki(str(tmp_path / "hook-pki"), "127.0.0.1")
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    webhook, port = start_sample(
        tmp_path, certs, "platform-authz-webhook", "--policy-file", str(policy)
    )
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t-carol,carol,1\nt-dave,dave,2\nt-erin,erin,3\n")
    server = start_server(
        tmp_path / "data",
        "--authorization-mode",
        "Webhook",
        "--authorization-webhook-config-file",
        str(webhook_kubeconfig(tmp_path, certs, port)),
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
        webhook.terminate()
        webhook.wait(timeout=10)
        assert session_for(server, token="t-carol").get(url).status_code == 200
        r = session_for(server, token="t-carol").get(server.url + "/api/v1/namespaces")
        assert r.status_code == 403
        assert "webhook authorizer failed" in r.json()["message"]
        admin = session_for(server, cert=server.admin_cert)
        assert admin.get(server.url + "/api/v1/namespaces").status_code == 200
    finally:
        server.stop()
        if webhook.poll() is None:
            webhook.terminate()
            webhook.wait(timeout=10)
