"""``--workers N``: N server processes on one port and one LMDB environment.

One Python process uses one core.  The supervisor binds the port once, imports the
server and forks N workers from it (forkedworker.py), each running the server as
``twistd platform-apiserver`` with the same flags would, with the listening socket
inherited, so the kernel hands each new connection to whichever worker accepts first.
The workers share the data directory: LMDB serializes their writers and keeps one
global revision; each worker's watch hub reads the change log, woken by its siblings'
commit datagrams (workerslot.py).

The supervisor restarts a worker that dies (its connections end; clients re-watch from
their last resourceVersion), records every worker's state for /readyz, and on SIGTERM
stops them all, each draining as a single server does.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import time
from typing import Any

import orjson
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger

from platform_api.apiserver import loopback, pki
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.forkedworker import ForkedWorker, MakeService
from platform_api.apiserver.sharedwriter import WRITER_ENV, SharedWriter, shares_writer
from platform_api.apiserver.signals import exit_on_second_signal
from platform_api.apiserver.workerslot import (
    FDS_ENV,
    PORTS_ENV,
    READY,
    STATUS_FILE,
    WORKER_ENV,
)
from platform_api.privatefiles import private_dir

log = Logger()
# Child descriptors: 0-2 as usual, then the listening socket, the wake socket, the status pipe.
LISTEN_FD, WAKE_FD, STATUS_FD = 3, 4, 5
# A worker that dies within this many seconds of starting is restarted after a growing delay.
QUICK_DEATH = 5.0
MAX_DELAY = 10.0
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT[\d:]+[+-]\d{4} ")


def plugin_arguments(argv: list[str], plugin: str = "platform-apiserver") -> list[str]:
    """The flags after the plugin name on twistd's command line, as the workers take
    them: all of them, as /flagz shows them (a worker does not repeat the notices of the
    deprecated and inert ones, which the supervisor printed once already)."""
    return argv[argv.index(plugin) + 1 :] if plugin in argv else []


class WorkerProtocol(ProcessProtocol):
    """One worker process: its log lines go to the supervisor's log, its status pipe
    says when it is ready."""

    def __init__(self, supervisor: WorkerSupervisor, index: int) -> None:
        self.supervisor = supervisor
        self.index = index
        self.started = time.monotonic()
        self._partial = b""

    def childDataReceived(self, childFD: int, data: bytes) -> None:
        if childFD == STATUS_FD:
            if READY in data:
                self.supervisor.worker_ready(self.index)
            return
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if line.strip():
                # The worker's own timestamp goes: the supervisor's log line has one.
                text = _TIMESTAMP.sub("", line.decode("utf-8", "replace"), count=1)
                log.info("[worker-{index}] {line}", index=self.index, line=text)

    def processEnded(self, reason: Any) -> None:
        self.supervisor.worker_ended(self, reason.value)


class WorkerSupervisor(Service):
    name = "platform-apiserver-workers"

    def __init__(
        self,
        config: ServerConfig,
        argv: list[str],
        worker_service: MakeService,
        reactor: Any = None,
    ) -> None:
        if reactor is None:
            from twisted.internet import reactor as global_reactor  # noqa: PLC0415

            reactor = global_reactor
        self.config = config
        self.argv = argv
        self.worker_service = worker_service
        self.reactor = reactor
        self.started_at = time.monotonic()
        self.processes: dict[int, WorkerProtocol] = {}
        self.states: dict[int, dict[str, Any]] = {}
        self.delays: dict[int, float] = {}
        self.stopping = False
        self._all_ended: defer.Deferred[None] | None = None
        self._announced = False
        self.loopback_token = loopback.new_token()
        self.writer = SharedWriter(reactor, config) if shares_writer(config) else None

    # -- start --------------------------------------------------------------------

    def startService(self) -> None:
        super().startService()
        exit_on_second_signal(self.reactor, before_exit=self._kill_all)
        cfg = self.config
        private_dir(cfg.data_dir, ours=False)
        private_dir(os.path.join(cfg.data_dir, "run"))
        # Files the workers would race to create: made once, before them.
        if cfg.embedded_pki:
            pki.ensure_pki(cfg.cert_dir, cfg.bind_address)
        if not (cfg.service_account_signing_key_file or cfg.service_account_signing_endpoint):
            pki.ensure_service_account_key(cfg.cert_dir)
        self.listener = _listen(cfg.bind_address, cfg.secure_port, backlog=1024)
        cfg.secure_port = self.listener.getsockname()[1]
        self.wake = [_wake_socket() for _ in range(cfg.workers)]
        self.ports = ",".join(str(s.getsockname()[1]) for s in self.wake)
        log.info("Serving securely on {url}", url=f"https://{cfg.bind_address}:{cfg.secure_port}")
        if cfg.embedded_pki and not cfg.client_ca_file:
            paths = pki.Paths.under(cfg.cert_dir)
            pki.write_admin_kubeconfig(cfg.kubeconfig_path, cfg.server_url, paths)
        if self.writer is not None:
            self.writer.start()  # the workers connect to it as it comes up
        for index in range(cfg.workers):
            self._spawn(index)

    def _spawn(self, index: int) -> None:
        cfg = self.config
        # The port the supervisor bound, even when the command line said 0.
        args = [*plugin_arguments(self.argv), "--secure-port", str(cfg.secure_port)]
        env = dict(os.environ)
        env[loopback.TOKEN_ENV] = self.loopback_token  # every worker accepts it
        env[WORKER_ENV] = f"{index}/{cfg.workers}"
        env[FDS_ENV] = f"{LISTEN_FD},{WAKE_FD},{STATUS_FD}"
        env[PORTS_ENV] = self.ports
        if self.writer is not None:
            env[WRITER_ENV] = self.writer.socket
        protocol = WorkerProtocol(self, index)
        self.processes[index] = protocol
        self._record(index, "starting")
        fds: dict[int, int | str] = {0: "w", 1: "r", 2: "r", STATUS_FD: "r"}
        fds.update({LISTEN_FD: self.listener.fileno(), WAKE_FD: self.wake[index].fileno()})
        name = f"apiserver-w{index}"
        ForkedWorker(self.reactor, self.worker_service, args, env, protocol, fds, name)

    # -- events from the workers ----------------------------------------------------------

    def worker_ready(self, index: int) -> None:
        self._record(index, "ready")
        self.delays.pop(index, None)
        if not self._announced and all(
            self.states.get(i, {}).get("state") == "ready" for i in range(self.config.workers)
        ):
            self._announced = True
            log.info(
                "Ready: {count} workers, {seconds:.2f}s after start",
                count=self.config.workers,
                seconds=time.monotonic() - self.started_at,
            )

    def worker_ended(self, protocol: WorkerProtocol, why: Any) -> None:
        index = protocol.index
        if self.processes.get(index) is protocol:
            del self.processes[index]
        if self.stopping:
            self._record(index, "stopped")
            if not self.processes and self._all_ended is not None:
                self._all_ended.callback(None)
            return
        delay = 0.2
        if time.monotonic() - protocol.started < QUICK_DEATH:
            delay = min(MAX_DELAY, self.delays.get(index, 0.1) * 2)
        self.delays[index] = delay
        log.warn(
            "worker {index} exited ({why}); restarting in {delay:.1f}s",
            index=index,
            why=why,
            delay=delay,
        )
        self._record(index, "restarting")
        self.reactor.callLater(delay, self._respawn, index)

    def _respawn(self, index: int) -> None:
        if not self.stopping and index not in self.processes:
            self._spawn(index)

    def _record(self, index: int, state: str) -> None:
        """Write every worker's state where the workers' /readyz reads it."""
        pid = None
        protocol = self.processes.get(index)
        if protocol is not None and protocol.transport is not None:
            pid = protocol.transport.pid
        self.states[index] = {"state": state, "pid": pid, "since": time.time()}
        path = os.path.join(self.config.data_dir, STATUS_FILE)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps({str(i): s for i, s in self.states.items()}))
        os.replace(tmp, path)

    # -- stop ---------------------------------------------------------------------------

    def stopService(self) -> Any:
        super().stopService()
        self.stopping = True
        if not self.processes:
            return self._stop_writer(None)
        self._all_ended = defer.Deferred()
        for protocol in list(self.processes.values()):
            if protocol.transport is not None:
                protocol.transport.signalProcess("TERM")
        # Each worker drains for --shutdown-delay-duration; past that, it is stuck.
        limit = self.config.shutdown_delay + 30.0
        killer = self.reactor.callLater(limit, self._kill_all)

        def ended(result: object) -> object:
            if killer.active():
                killer.cancel()
            return result

        return self._all_ended.addBoth(ended).addBoth(self._stop_writer)

    def _stop_writer(self, result: object) -> object:
        """The workers' writer ends after them: they committed through it to the end."""
        if self.writer is None:
            return result
        return self.writer.stop().addCallback(lambda _: result)

    def _kill_all(self) -> None:
        if self.writer is not None:
            self.writer.kill()  # nothing is left to commit through it
        for protocol in list(self.processes.values()):
            if protocol.transport is not None and protocol.transport.pid:
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.kill(protocol.transport.pid, signal.SIGKILL)


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.setblocking(False)
    sock.set_inheritable(True)
    return sock


def _wake_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    sock.set_inheritable(True)
    return sock
