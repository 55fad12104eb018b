"""Secret-based service-account tokens end to end, with kubectl: the tokens controller fills
the Secret, the token authenticates while the Secret and account stand, every use is
tracked on the Secret, and the tracking ConfigMap says since when."""

from __future__ import annotations

import base64
import datetime
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.answers import status
from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import eventually

NS = "legacy-tokens"
SECRET = f"""apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  namespace: {NS}
  annotations:
    platform.io/service-account.name: robot
type: platform.io/service-account-token
"""
WARNING = (
    "Warning: Use tokens from the TokenRequest API or manually created secret-based tokens "
    "instead of auto-generated secret-based tokens.\n"
)


def as_token(server: Server, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    """kubectl with nothing but the token (the admin kubeconfig's certificate would win)."""
    return server.kubectl(
        "--kubeconfig=/dev/null",
        f"--server={server.url}",
        f"--certificate-authority={server.ca}",
        f"--token={token}",
        *args,
        check=False,
    )


def secret(server: Server) -> dict[str, Any]:
    found = server.kubectl("-n", NS, "get", "secret", "robot-token", "-o", "json", check=False)
    return json.loads(found.stdout) if found.returncode == 0 else {}


USES = ("legacy_tokens", "legacy_manual_token_uses", "legacy_auto_token_uses")
USES += ("invalid_legacy_auto_token_uses",)


def uses(admin: requests.Session, server: Server) -> dict[str, float]:
    """kube's serviceaccount_*_total counters of Secret-based tokens."""
    found = {}
    for line in admin.get(server.url + "/metrics").text.splitlines():
        name, _, value = line.partition(" ")
        if name.startswith("serviceaccount_") and name.endswith("_total"):
            found[name.removeprefix("serviceaccount_").removesuffix("_total")] = float(value)
    return found


@pytest.fixture
def uncached(tmp_path: Path) -> Iterator[Server]:
    """A server without kube's 10 s token cache: each use of the token is judged anew,
    so a change to the Secret or the account shows in the very next request."""
    running = start_server(tmp_path / "data", "--authentication-token-cache-ttl=0s")
    yield running
    running.stop()


def test_a_secret_based_token_from_issue_to_invalidation(uncached: Server) -> None:
    server = uncached
    admin = session_for(server, cert=server.admin_cert)
    before = uses(admin, server)
    assert set(USES) <= set(before)  # shown from the start, as kube's
    server.kubectl("create", "namespace", NS)
    server.kubectl("-n", NS, "create", "serviceaccount", "robot")
    server.kubectl("apply", "-f", "-", stdin=SECRET)
    filled = eventually(lambda: (secret(server).get("data") or {}).get("token"))
    token = base64.b64decode(filled).decode()
    data = secret(server)["data"]
    assert base64.b64decode(data["namespace"]) == NS.encode()
    assert base64.b64decode(data["ca.crt"]).startswith(b"-----BEGIN CERTIFICATE-----")

    used = as_token(server, token, "-n", NS, "get", "serviceaccounts", "-o", "name")
    assert (used.returncode, used.stdout, used.stderr) == (
        0,
        "serviceaccount/default\nserviceaccount/robot\n",
        "",
    )
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    labels = eventually(lambda: secret(server)["metadata"].get("labels"))
    assert labels == {"platform.io/legacy-token-last-used": today}

    # Listed in the account's secrets (auto-generated, in kube's words): a warning.
    server.kubectl("-n", NS, "patch", "serviceaccount", "robot", "-p", SECRETS_LIST)
    warned = as_token(server, token, "-n", NS, "get", "serviceaccount", "robot", "-o", "name")
    assert (warned.returncode, warned.stdout, warned.stderr) == (
        0,
        "serviceaccount/robot\n",
        WARNING,
    )

    # Marked invalid: refused with kube's Status, whoever asks.
    server.kubectl(
        "-n",
        NS,
        "label",
        "secret",
        "robot-token",
        "platform.io/legacy-token-invalid-since=2026-01-01",
    )
    refused = session_for(server, token=token).get(f"{server.url}/api/v1/namespaces/{NS}")
    assert (refused.status_code, refused.json()) == (
        401,
        status(401, "Unauthorized", "Unauthorized"),
    )

    used = {k: v - before[k] for k, v in uses(admin, server).items() if k in USES}
    assert used["invalid_legacy_auto_token_uses"] == 1
    assert used["legacy_manual_token_uses"] >= 1 and used["legacy_auto_token_uses"] >= 1
    assert used["legacy_tokens"] == sum(used.values()) - used["legacy_tokens"]

    # The account deleted: its token Secret goes too.
    server.kubectl("-n", NS, "delete", "serviceaccount", "robot")
    eventually(lambda: secret(server) == {})


SECRETS_LIST = '{"secrets": [{"name": "robot-token"}]}'


def test_the_tracking_configmap_says_since_when(server: Server, admin: requests.Session) -> None:
    url = (
        f"{server.url}/api/v1/namespaces/platform-system/configmaps/"
        "kube-apiserver-legacy-service-account-token-tracking"
    )
    found = eventually(lambda: admin.get(url).json() if admin.get(url).ok else None)
    assert datetime.date.fromisoformat(found["data"]["since"])
    [entry] = found["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["fieldsV1"]) == (
        "kube-apiserver",
        "Update",
        {"f:data": {".": {}, "f:since": {}}},
    )


def test_the_cleaner_marks_an_unused_auto_generated_token_invalid(tmp_path: Path) -> None:
    """kube's cleaner looks once a day, first at start: a server started again with a
    2 s clean-up period, a tracking date long past and a token unused since it was made."""
    flags = ("--legacy-service-account-token-clean-up-period=2s",)
    first = start_server(tmp_path / "data", *flags)
    try:
        first.kubectl("create", "namespace", NS)
        first.kubectl("-n", NS, "create", "serviceaccount", "robot")
        first.kubectl("-n", NS, "patch", "serviceaccount", "robot", "-p", SECRETS_LIST)
        first.kubectl("apply", "-f", "-", stdin=SECRET)
        token = base64.b64decode(eventually(lambda: (secret(first).get("data") or {}).get("token")))
        tracking = ("-n", "platform-system", "patch", "configmap", TRACKING, "-p")
        first.kubectl(*tracking, '{"data": {"since": "2026-01-01"}}')
    finally:
        first.stop()
    time.sleep(2.5)  # older than the period, unused within it
    again = start_server(tmp_path / "data", *flags)
    try:
        today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        labels = eventually(lambda: secret(again)["metadata"].get("labels"))
        assert labels == {"platform.io/legacy-token-invalid-since": today}
        refused = as_token(again, token.decode(), "-n", NS, "get", "serviceaccounts")
        assert (refused.returncode, refused.stderr) == (
            1,
            "error: You must be logged in to the server (Unauthorized)\n",
        )
    finally:
        again.stop()


TRACKING = "kube-apiserver-legacy-service-account-token-tracking"
