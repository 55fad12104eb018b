"""One worker of ``--workers N``, as the worker sees its place among its siblings.

The supervisor (workers.py) binds the port and a UDP wake socket per worker, then
starts each worker with those descriptors and this environment:

- ``PLATFORM_APISERVER_WORKER``: ``<index>/<count>``;
- ``PLATFORM_APISERVER_FDS``: ``<listen fd>,<wake fd>,<status fd>``;
- ``PLATFORM_APISERVER_WAKE_PORTS``: every worker's wake port, by index.

A worker serves on the inherited socket, hears of its siblings' commits (from their
shared LMDB writer, or where each commits itself, a datagram from the sibling: at most
one per WAKE_GAP) so that it reads the change log at once instead of at the next poll,
and tells the supervisor when it is ready through the status pipe.
The supervisor writes what it knows of every worker to ``<data-dir>/run/workers.json``;
/readyz reads it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import DatagramProtocol
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from platform_api.apiserver.sharedport import ConnectionBoard, adopt_shared
from platform_api.apiserver.signals import stop_reactor
from platform_api.timers import timer_clock

if TYPE_CHECKING:  # the supervisor imports this module, and serves no health endpoint
    from platform_api.apiserver.health import HealthCheck

log = Logger()
WORKER_ENV = "PLATFORM_APISERVER_WORKER"
FDS_ENV = "PLATFORM_APISERVER_FDS"
PORTS_ENV = "PLATFORM_APISERVER_WAKE_PORTS"
STATUS_FILE = os.path.join("run", "workers.json")
BOARD_FILE = os.path.join("run", "connections")  # each worker's open connections
READY = b"ready\n"


@dataclass(frozen=True)
class WorkerSlot:
    index: int
    count: int
    listen_fd: int
    wake_fd: int
    status_fd: int
    wake_ports: tuple[int, ...]

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> WorkerSlot | None:
        """The slot this process was started in, or None outside ``--workers``."""
        if WORKER_ENV not in environ:
            return None
        index, count = (int(part) for part in environ[WORKER_ENV].split("/"))
        listen_fd, wake_fd, status_fd = (int(fd) for fd in environ[FDS_ENV].split(","))
        ports = tuple(int(p) for p in environ[PORTS_ENV].split(","))
        return cls(index, count, listen_fd, wake_fd, status_fd, ports)

    def adopt(self, reactor: Any, factory: Any, data_dir: str) -> Any:
        """Serve ``factory`` on the supervisor's listening socket, sharing new
        connections with the sibling workers (sharedport.py)."""
        board = ConnectionBoard(os.path.join(data_dir, BOARD_FILE), self.index, self.count)
        return adopt_shared(reactor, self.listen_fd, factory, board)

    def follow_supervisor(self, reactor: Any, interval: float = 1.0) -> LoopingCall:
        """Stop this worker when its supervisor is gone (killed with -9, say): a worker
        alone would keep serving a port nobody manages."""
        parent = os.getppid()

        def check() -> None:
            if os.getppid() != parent:
                log.warn("the supervisor is gone; stopping")
                stop_reactor(reactor)

        loop = LoopingCall(check)
        loop.clock = reactor
        loop.start(interval, now=False)
        return loop

    def report_ready(self) -> None:
        """Tell the supervisor this worker finished bootstrapping."""
        try:
            os.write(self.status_fd, READY)
        except OSError:
            log.warn("could not tell the supervisor this worker is ready")


# Commits within this many seconds of a wake share the next one.  Every wake costs each
# sibling a wake-up and a read of the change log (a sibling standing by while one worker
# served 8 clients spent ~0.07 ms per create following it, its controllers' share
# included), while a busy sibling reads the log before each request anyway.  Under load
# a worker commits every ~1 ms; the siblings now hear of it at most every WAKE_GAP, which
# bounds the added delay (under the 5 ms promised) and makes a sibling's cost per write
# fall as the write rate rises.
WAKE_GAP = 0.002


class WakeSiblings(DatagramProtocol):
    """Commit notifications between workers: a datagram to every sibling on a commit,
    coalesced (WAKE_GAP); a received one makes this worker read the change log at once.
    Datagrams other than a wake (``!``) go to ``on_message`` (the metrics exchange).

    Only a sibling's wake socket is heard: loopback UDP ports are open to every local
    process, and one that is not a sibling cannot send from a sibling's bound port
    (spoofing a source needs raw sockets, i.e. root), so anything else is dropped."""

    noisy = False
    on_message: Callable[[bytes, Any], None] | None = None

    def __init__(self, slot: WorkerSlot, on_wake: Callable[[], None], reactor: Any) -> None:
        self.slot = slot
        self._on_wake = on_wake
        self._reactor = reactor
        self._clock = timer_clock(reactor)
        self._due: IDelayedCall | None = None  # the log read news made due
        self._stopped = False
        self._targets = [
            ("127.0.0.1", port) for i, port in enumerate(slot.wake_ports) if i != slot.index
        ]
        self._siblings = frozenset(self._targets)
        self._last_wake = float("-inf")
        self._next_wake: IDelayedCall | None = None

    def listen(self) -> None:
        self._reactor.adoptDatagramPort(self.slot.wake_fd, socket.AF_INET, self)
        os.close(self.slot.wake_fd)

    def notify(self) -> None:
        """A commit: wake the siblings now, or with the next wake if one went out less
        than WAKE_GAP ago.  (A sibling restarting, a full buffer: it polls the log.)"""
        if self._next_wake is not None:
            return  # a wake is due: it tells of this commit too
        wait = self._last_wake + WAKE_GAP - self._clock()
        if wait > 0:
            self._next_wake = self._reactor.callLater(wait, self._wake_now)
        else:
            self._wake_now()

    def _wake_now(self) -> None:
        self._next_wake = None
        self._last_wake = self._clock()
        self.send(b"!")

    def stop(self) -> None:
        """No wake left due, and no news heard (the worker is stopping: its storage is
        closed next)."""
        self._stopped = True
        for call in (self._next_wake, self._due):
            if call is not None and call.active():
                call.cancel()
        self._next_wake = self._due = None

    def send(self, data: bytes, address: Any = None) -> None:
        """``data`` to ``address``, or to every sibling when it is None."""
        if self.transport is None:
            return
        for target in self._targets if address is None else [address]:
            with contextlib.suppress(OSError):
                self.transport.write(data, target)

    def datagramReceived(self, datagram: bytes, addr: Any) -> None:
        if addr not in self._siblings:
            return
        if datagram != b"!":
            if self.on_message is not None:
                self.on_message(datagram, addr)
            return
        self.heard()

    def heard(self) -> None:
        """News of a sibling's commit (a wake datagram, or the shared LMDB writer's news):
        read the change log on the next turn, after this turn's own commits."""
        if self._due is not None or self._stopped:
            return  # one log read per reactor turn, however many siblings committed
        self._due = self._reactor.callLater(0, self._wake)

    def _wake(self) -> None:
        self._due = None
        self._on_wake()


class WorkerStates:
    """The supervisor's record of every worker, re-read when the file changes."""

    def __init__(self, data_dir: str, count: int, clock: IReactorTime | None = None) -> None:
        self.path = os.path.join(data_dir, STATUS_FILE)
        self.count = count
        self._mtime = -1.0
        self._states: dict[str, Any] = {}
        self._clock: Callable[[], float] = clock.seconds if clock is not None else time.time

    def state(self, index: int) -> dict[str, Any]:
        try:
            mtime = os.stat(self.path).st_mtime
        except OSError:
            return {}
        if mtime != self._mtime:
            try:
                with open(self.path, "rb") as f:
                    self._states = orjson.loads(f.read())
                self._mtime = mtime
            except (OSError, orjson.JSONDecodeError):
                return {}
        value = self._states.get(str(index), {})
        return value if isinstance(value, dict) else {}

    def check(self, index: int) -> str | None:
        state = self.state(index).get("state", "unknown")
        return None if state == "ready" else state

    def health_checks(self) -> list[HealthCheck]:
        """``[+]worker-<i> ok`` per worker on /readyz: each must be up and bootstrapped."""
        from platform_api.apiserver.health import HealthCheck  # noqa: PLC0415

        return [
            HealthCheck(f"worker-{i}", lambda i=i: self.check(i))  # type: ignore[misc]
            for i in range(self.count)
        ]
