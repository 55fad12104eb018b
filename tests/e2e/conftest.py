"""Start real ``twistd platform-apiserver`` processes for end-to-end tests."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
import urllib3

urllib3.disable_warnings()
VENV_BIN = Path(sys.executable).parent
PORT_LINE = re.compile(rb"Serving securely on https://[^:]+:(\d+)")


@dataclass
class Server:
    data_dir: Path
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    extra_args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"

    @property
    def ca(self) -> str:
        return str(self.data_dir / "pki" / "ca.crt")

    @property
    def admin_cert(self) -> tuple[str, str]:
        pki = self.data_dir / "pki"
        return str(pki / "admin.crt"), str(pki / "admin.key")

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        cmd = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(self.kubeconfig), *args]
        result = subprocess.run(
            cmd, check=False, input=stdin, capture_output=True, text=True, timeout=60
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(data_dir: Path, *args: str, timeout: float = 30.0) -> Server:
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / f"server-{time.time_ns()}.log"  # a fresh log per start: it tells the port
    cmd = [
        str(VENV_BIN / "twistd"),
        "--pidfile=",
        "-n",
        "--logfile",
        str(log),
        "platform-apiserver",
        "--data-dir",
        str(data_dir),
        "--secure-port",
        "0",
        "--bind-address",
        "127.0.0.1",
        *args,
    ]
    process = subprocess.Popen(cmd, cwd=data_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    port = 0
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"server exited early ({process.returncode}): {err}")
        text = log.read_bytes() if log.exists() else b""
        match = PORT_LINE.search(text)
        if match:
            port = int(match.group(1))
            if b"Ready:" in text:
                break
        time.sleep(0.05)
    else:
        process.kill()
        raise RuntimeError(
            f"server did not become ready: {log.read_text() if log.exists() else ''}"
        )
    return Server(data_dir, process, port, log, list(args))


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("apiserver"))
    yield running
    running.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own (for tests that restart or reconfigure it)."""
    running = start_server(tmp_path / "data")
    yield running
    running.stop()


@pytest.fixture
def admin(server: Server) -> requests.Session:
    return session_for(server, cert=server.admin_cert)


def session_for(
    server: Server, cert: tuple[str, str] | None = None, token: str = ""
) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would otherwise override ``verify``
    session.verify = server.ca
    session.cert = cert
    if token:
        session.headers["Authorization"] = f"Bearer {token}"
    return session


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def kubectl_available() -> bool:
    return shutil.which("kubectl", path=str(VENV_BIN)) is not None


os.environ.setdefault("KUBECTL_EXTERNAL_DIFF", "diff")
