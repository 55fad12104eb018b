"""kubeconfig loading: contexts, relative paths, -data fields, errors."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from platform_api.client.kubeconfig import KubeconfigError, load


def test_current_context_with_relative_files_and_data(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CA")
    (tmp_path / "token").write_text("secret\n")
    key = base64.b64encode(b"KEY").decode()
    (tmp_path / "config").write_text(
        f"""clusters:
- name: c
  cluster: {{server: "https://h:1/", certificate-authority: ca.crt, tls-server-name: api}}
users:
- name: u
  user: {{tokenFile: token, client-key-data: {key}}}
contexts:
- name: x
  context: {{cluster: c, user: u}}
current-context: x
"""
    )
    conn = load(str(tmp_path / "config"))
    assert (conn.server, conn.ca_pem, conn.key_pem, conn.token, conn.tls_server_name) == (
        "https://h:1/",
        b"CA",
        b"KEY",
        "secret",
        "api",
    )
    assert conn.request_headers()["Authorization"] == "Bearer secret"


def test_errors(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("clusters: []\n")
    with pytest.raises(KubeconfigError, match="not exactly one cluster"):
        load(str(path))
    path.write_text("current-context: nope\ncontexts: []\n")
    with pytest.raises(KubeconfigError, match="context 'nope' not found"):
        load(str(path))
