"""The server's end of its own LMDB writer process (lmdb_writer.py says why there is one).

``WriterProcess`` spawns ``python -m platform_api.storage.lmdb_writer`` and carries the
frames (lmdb_link.py) on its stdin and stdout.  If the process dies, the writes it was
sent are answered as lost and a new process is spawned; writes queued meanwhile wait
for it.  Stopping closes its input: it finishes the batch in hand and exits.
"""

from __future__ import annotations

import os
import time
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.eager import send_now
from platform_api.storage.lmdb_link import FramedWriter
from platform_api.storage.lmdb_writer import writer_command

log = Logger()
_QUICK_DEATH = 2.0  # seconds: a process that dies sooner is started again with back-off
_MAX_DELAY = 5.0


class RestartingWriter(ProcessProtocol):
    """A writer process (``args``), started again when it dies (with back-off when it
    dies young) until stopped; its log lines go to this process's log as
    ``[lmdb-writer]``.  Stopping closes its input: it finishes the batch in hand and
    exits."""

    def __init__(self, reactor: Any, args: list[str]) -> None:
        self._reactor = reactor
        self._args = args
        self._stopping = False
        self._started = 0.0
        self._delay = 0.1
        self._ended: Deferred[None] | None = None
        self._errors = b""

    def start(self) -> None:
        self._started = time.monotonic()
        self._reactor.spawnProcess(
            self, self._args[0], self._args, env=os.environ, childFDs={0: "w", 1: "r", 2: "r"}
        )

    def stop(self) -> Deferred[None]:
        """Close its input; fires when it has exited."""
        self._stopping = True
        self._ended = Deferred()
        if self.transport is None:
            self._ended.callback(None)
        else:
            self.transport.closeStdin()
        return self._ended

    def kill(self) -> None:
        if self.transport is not None:
            self.transport.signalProcess("KILL")

    def exited(self, why: str) -> None:
        """The process ended (``why``): what was in flight with it is lost."""

    def processEnded(self, reason: Failure) -> None:
        self.transport = None
        if self._stopping:
            self.exited("the server is stopping")
            if self._ended is not None:
                self._ended.callback(None)
            return
        why = reason.getErrorMessage()
        self.exited(f"the LMDB writer process exited ({why})")
        quick = time.monotonic() - self._started < _QUICK_DEATH
        self._delay = min(_MAX_DELAY, self._delay * 2) if quick else 0.1
        log.warn(
            "LMDB writer process exited ({why}); restarting in {delay:.1f}s",
            why=why,
            delay=self._delay,
        )
        self._reactor.callLater(self._delay, self._restart)

    def _restart(self) -> None:
        if not self._stopping and self.transport is None:
            self.start()

    def childDataReceived(self, fd: int, data: bytes) -> None:
        *lines, self._errors = (self._errors + data).split(b"\n")
        for line in lines:
            log.info("[lmdb-writer] {line}", line=line.decode(errors="replace"))


class WriterProcess(RestartingWriter, FramedWriter):
    """A server's own writer process, carrying the frames on its stdin and stdout."""

    def __init__(self, reactor: Any, path: str, map_size: int, map_ceiling: int) -> None:
        FramedWriter.__init__(self, reactor)
        RestartingWriter.__init__(self, reactor, writer_command(path, map_size, map_ceiling))
        self.start()

    @property
    def linked(self) -> bool:
        return self.transport is not None

    def start(self) -> None:
        super().start()
        if self._outbox:
            self._schedule()

    def exited(self, why: str) -> None:
        self._link_lost(why)

    def _write(self, data: bytes) -> bool:
        """Into the pipe at once when it is empty: Twisted's process writer would
        stop watching it for readability, watch it for writability, and undo both a
        turn later (four ``epoll_ctl`` calls a frame).  False when the pipe is broken
        before any of ``data`` went in."""
        assert self.transport is not None
        pipe = getattr(self.transport, "pipes", {}).get(0)  # a spawned process's stdin
        if pipe is not None:
            broken = False

            def send(chunk: bytes) -> int:
                nonlocal broken
                try:
                    return os.write(pipe.fd, chunk)
                except BrokenPipeError:
                    broken = True
                    raise

            data = send_now(pipe, data, send)
            if broken:
                return False
        if data:
            self.transport.write(data)
        return True

    def childDataReceived(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._received(data)
        else:
            super().childDataReceived(fd, data)

    def _abort(self) -> None:
        self.kill()
