"""The set-up of the audit end-to-end tests: a real server with a policy, a log file and
a real webhook sink (tests/e2e/auditsink.py), and reading the events back."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from platform_api.apiserver import pki
from tests.e2e.conftest import Server, start_server

POLICY = """apiVersion: audit.platform.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: Request
  resources: [{group: "", resources: ["configmaps"]}]
  omitManagedFields: true
- level: RequestResponse
  resources: [{group: "", resources: ["pods"]}]
  omitStages: [RequestReceived]
- level: Metadata
"""
NS = "/api/v1/namespaces/default"
JSON_BODY = {"Content-Type": "application/json"}


class Setup:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "audit" / "audit.log"
        self.sunk = root / "sink.jsonl"
        self.sink: subprocess.Popen[bytes] | None = None
        self.server: Server | None = None

    @classmethod
    def started(cls, root: Path, *flags: str) -> Setup:
        """A sink, then a server logging to a file and to the sink by POLICY."""
        setup = cls(root)
        setup.start_sink()
        policy = root / "policy.yaml"
        policy.write_text(POLICY)
        setup.server = start_server(
            root / "data",
            f"--audit-policy-file={policy}",
            f"--audit-log-path={setup.log}",
            f"--audit-webhook-config-file={root / 'sink.kubeconfig'}",
            "--audit-webhook-batch-max-wait=100ms",
            *flags,
        )
        return setup

    def start_sink(self) -> int:
        certs = pki.ensure_pki(str(self.root / "sink-pki"), "127.0.0.1")
        port_file = self.root / "sink.port"
        self.sink = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.auditsink", certs.serving_cert,
             certs.serving_key, str(self.sunk), str(port_file)],
            cwd=Path(__file__).parents[2],
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text()):
            assert time.monotonic() < deadline, "audit sink did not start"
            time.sleep(0.05)
        kubeconfig = self.root / "sink.kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sink\n  cluster:\n"
            f"    server: https://127.0.0.1:{port_file.read_text()}/audit\n"
            f"    certificate-authority: {certs.ca_cert}\n"
            "contexts:\n- name: sink\n  context: {cluster: sink, user: ''}\n"
            "current-context: sink\n"
        )
        return int(port_file.read_text())

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.sink is not None and self.sink.poll() is None:
            self.sink.kill()
            self.sink.wait()


def audited_server(root: Path) -> Setup:
    """The modules' server: POLICY, the sink, RBAC, and user bob (group dev) by token."""
    tokens = root / "tokens.csv"
    tokens.write_text('tok-bob,bob,3,"dev"\n')
    return Setup.started(root, "--authorization-mode=RBAC", f"--token-auth-file={tokens}")


def logged(path: Path) -> list[dict[str, Any]]:
    """The events written to an audit log so far: its complete lines (the server or sink
    may be in the middle of writing the last one)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return [orjson.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def events(path: Path, audit_id: str, count: int = 1, wait: float = 10.0) -> list[dict[str, Any]]:
    """The events of one request in ``path`` once at least ``count`` are there."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        found = [e for e in logged(path) if e["auditID"] == audit_id]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def completed(path: Path, audit_id: str, wait: float = 10.0) -> dict[str, Any]:
    """The ResponseComplete event of one request in ``path``."""
    deadline = time.monotonic() + wait
    while True:
        done = [e for e in events(path, audit_id, 0) if e["stage"] == "ResponseComplete"]
        if done or time.monotonic() > deadline:
            assert done, audit_id
            return done[0]
        time.sleep(0.05)
