"""The server's end of its LMDB writer process (lmdb_writer.py says why there is one).

``WriterProcess`` is the ``WriterChannel`` an ``LMDBStorage`` sends its writes to.  The
ops of one reactor turn go out as one frame; outcomes come back in order, and their
events are published before their callers resume, as the in-process writer does.

If the process dies, the writes it was sent are answered with an error (their outcome
is unknown, as a write to an etcd that stopped answering), the commits whose outcome was
lost are read back from the change log so watchers miss none, and a new process is
spawned; writes queued meanwhile wait for it.  Stopping closes its input: it finishes
the batch in hand and exits.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.eager import send_now
from platform_api.storage.interface import UNREACHABLE, Event, StorageError
from platform_api.storage.lmdb_commit import Op
from platform_api.storage.lmdb_store import Deliver
from platform_api.storage.lmdb_wire import FrameReader, decode_outcome, encode_ops

log = Logger()
_QUICK_DEATH = 2.0  # seconds: a process that dies sooner is respawned with back-off
_MAX_DELAY = 5.0


class WriterProcess(ProcessProtocol):
    def __init__(self, reactor: Any, path: str, map_size: int, map_ceiling: int) -> None:
        self._reactor = reactor
        self._args = [
            sys.executable,
            "-m",
            "platform_api.storage.lmdb_writer",
            path,
            "--map-size",
            str(map_size),
            "--map-ceiling",
            str(map_ceiling),
        ]
        self._deliver: Deliver | None = None
        self._events_since: Callable[[int], list[Event]] | None = None
        self._outbox: list[Op] = []
        self._sent: dict[int, list[Op]] = {}
        self._seq = 0
        self._revision = 0  # the newest commit this process reported
        self._reader = FrameReader()
        self._errors = b""
        self._flush_call: IDelayedCall | None = None
        self._started = 0.0
        self._delay = 0.1
        self._stopping = False
        self._ended: Deferred[None] | None = None
        self._spawn()

    def attach(
        self, deliver: Deliver, events_since: Callable[[int], list[Event]], revision: int
    ) -> None:
        self._deliver, self._events_since = deliver, events_since
        self._revision = revision

    @property
    def running(self) -> bool:
        return self.transport is not None

    # -- the process ---------------------------------------------------------------

    def _spawn(self) -> None:
        self._started = time.monotonic()
        self._reader = FrameReader()
        self._reactor.spawnProcess(
            self, sys.executable, self._args, env=os.environ, childFDs={0: "w", 1: "r", 2: "r"}
        )
        if self._outbox:
            self._schedule()

    def stop(self) -> Deferred[None]:
        """Close its input; fires when it has exited."""
        self._stopping = True
        self._ended = Deferred()
        if self.transport is None:
            self._ended.callback(None)
        else:
            self.transport.closeStdin()
        return self._ended

    def processEnded(self, reason: Failure) -> None:
        self.transport = None
        lost, self._sent = [op for ops in self._sent.values() for op in ops], {}
        if self._stopping:
            self._answer_lost(lost, "the server is stopping")
            if self._ended is not None:
                self._ended.callback(None)
            return
        why = reason.getErrorMessage()
        self._answer_lost(lost, f"the LMDB writer process exited ({why})")
        quick = time.monotonic() - self._started < _QUICK_DEATH
        self._delay = min(_MAX_DELAY, self._delay * 2) if quick else 0.1
        log.warn(
            "LMDB writer process exited ({why}); restarting in {delay:.1f}s",
            why=why,
            delay=self._delay,
        )
        self._reactor.callLater(self._delay, self._respawn)

    def _respawn(self) -> None:
        if not self._stopping and self.transport is None:
            self._spawn()

    def _answer_lost(self, lost: list[Op], why: str) -> None:
        """Fail the writes in flight and publish what committed of them anyway."""
        missed: list[Event] = []
        if self._events_since is not None and not self._stopping:  # (the env may be closed)
            try:
                missed = self._events_since(self._revision)
            except Exception:
                log.failure("reading the change log after the writer process ended")
        if missed:
            self._revision = missed[-1].revision
        errors: list[Any] = [
            StorageError(UNREACHABLE, op.key, f"{why}; the write's outcome is unknown")
            for op in lost
        ]
        if self._deliver is not None and (missed or lost):
            self._deliver(errors, missed, lost)

    # -- writes --------------------------------------------------------------------

    def submit(self, ops: list[Op]) -> None:
        self._outbox += ops
        self._schedule()

    def _schedule(self) -> None:
        if self._flush_call is None and self.transport is not None:
            self._flush_call = self._reactor.callLater(0, self._flush)

    def _flush(self) -> None:
        """The turn's writes, as one frame: the writer commits them together."""
        self._flush_call = None
        if self.transport is None or not self._outbox:
            return
        ops, self._outbox = self._outbox, []
        try:
            frame = encode_ops(self._seq + 1, ops)
        except (ValueError, TypeError) as e:  # a value JSON cannot carry: these writes fail
            if self._deliver is not None:
                failed = [
                    StorageError(UNREACHABLE, op.key, f"storage write failed: {e}") for op in ops
                ]
                self._deliver(failed, [], ops)
            return
        self._seq += 1
        self._sent[self._seq] = ops
        if not self._write(frame):
            # The process is gone (its end of the pipe is closed) and read nothing of
            # this frame: its writes wait for the next process instead of failing.
            self._outbox[:0] = self._sent.pop(self._seq)

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
        if fd == 2:
            self._log_lines(data)
            return
        try:
            answered = [self._answered(payload) for payload in self._reader.feed(data)]
        except Exception:
            # Not what the writer sends: end it; its writes are answered as lost.
            log.failure("an unreadable answer from the LMDB writer process")
            if self.transport is not None:
                self.transport.signalProcess("KILL")
            return
        for results, events, ops in answered:
            if events:
                self._revision = events[-1].revision
            if self._deliver is not None:
                self._deliver(results, events, ops)

    def _answered(self, payload: Any) -> tuple[list[Any], list[Event], list[Op]]:
        """One outcome: the results, the events, and the ops they answer."""
        events, replies = decode_outcome(payload)
        for seq, answers in replies:
            if len(answers) != len(self._sent[seq]):  # checked before any is taken
                raise ValueError(f"{len(answers)} results for {len(self._sent[seq])} writes")
        results: list[Any] = []
        ops: list[Op] = []
        for seq, answers in replies:
            results += answers
            ops += self._sent.pop(seq)
        return results, events, ops

    def _log_lines(self, data: bytes) -> None:
        *lines, self._errors = (self._errors + data).split(b"\n")
        for line in lines:
            log.info("[lmdb-writer] {line}", line=line.decode(errors="replace"))
