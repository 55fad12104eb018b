"""Locks between the processes that share one data directory (``--workers N``).

An ``flock`` on a file under the data directory: the kernel releases it when its holder
exits, however it exits, so a killed worker never leaves a stale lock.  Waiting polls
(every ``interval`` seconds) instead of blocking a thread: the reactor stays free and the
wait can be cancelled at shutdown.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable

from twisted.internet.defer import CancelledError, Deferred, succeed
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall


class ProcessLock:
    def __init__(self, path: str, reactor: IReactorTime, interval: float = 0.05) -> None:
        self.path = path
        self._reactor = reactor
        self._interval = interval
        self._fd: int | None = None
        self._loop: LoopingCall | None = None
        self._pending: Deferred[None] | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(self) -> Deferred[None]:
        """Fires once this process holds the lock (cancel it to stop waiting)."""
        if self.try_acquire():
            return succeed(None)

        done: Deferred[None] = Deferred(lambda _: self._stop_waiting())

        def attempt() -> None:
            if self.try_acquire():
                self._stop_waiting()
                done.callback(None)

        self._wait(attempt)
        return done

    def when_acquired(self, then: Callable[[], None]) -> None:
        """Run ``then`` once the lock is ours: at once, or when its holder goes away."""
        self._pending = self.acquire()
        self._pending.addCallback(lambda _: then())
        self._pending.addErrback(lambda f: f.trap(CancelledError))

    def _wait(self, attempt: Callable[[], None]) -> None:
        self._loop = LoopingCall(attempt)
        self._loop.clock = self._reactor
        self._loop.start(self._interval, now=False)

    def _stop_waiting(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None

    def release(self) -> None:
        if self._pending is not None and not self._pending.called:
            self._pending.cancel()
        self._stop_waiting()
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
