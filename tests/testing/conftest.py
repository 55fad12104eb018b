"""Every test here runs with a decoy ~/.kube/config and no KUBECONFIG: a client that falls
back on either reaches a port where nothing listens, instead of the fixture's server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

DECOY = """apiVersion: v1
kind: Config
clusters:
- name: decoy
  cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}
users:
- name: decoy
  user: {token: decoy}
contexts:
- name: decoy
  context: {cluster: decoy, user: decoy}
current-context: decoy
"""


@pytest.fixture(autouse=True)
def decoy_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.getbasetemp() / "decoy-home"
    (home / ".kube").mkdir(parents=True, exist_ok=True)
    (home / ".kube" / "config").write_text(DECOY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    yield home
