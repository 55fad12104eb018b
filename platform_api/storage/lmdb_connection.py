"""A worker's link to the LMDB writer its ``--workers`` supervisor runs for all workers.

The writer listens on an abstract Unix socket (lmdb_serve.py); the frames are
lmdb_link.py's, after one greeting byte from the writer: a writer killed a moment ago
still completes connections into its socket's backlog, and a write sent into one of
those would be lost, so a link carries writes only once the writer has said hello.
When the connection breaks (the writer died and the supervisor is starting another),
the writes it carried are answered as lost, and the worker connects again, quickly at
first and then four times a second (a new writer is up in about half a second, and a
worker that waits longer is unready and holds its queued writes that much longer);
writes queued meanwhile go to the next writer.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import UNIXClientEndpoint
from twisted.internet.interfaces import IAddress, IDelayedCall
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.eager import write_now
from platform_api.storage.lmdb_link import FramedWriter
from platform_api.storage.lmdb_serve import GREETING
from platform_api.timers import timer_clock

log = Logger()
FIRST_RETRY = 0.02  # seconds; doubled per failed attempt up to LAST_RETRY
LAST_RETRY = 0.25
WARN_AFTER = 1.0  # seconds without a writer before one line says so


class _Link(Protocol):
    def __init__(self, owner: WriterConnection) -> None:
        self.owner = owner
        self.greeted = False

    def dataReceived(self, data: bytes) -> None:
        if not self.greeted:
            self.greeted, data = True, data[len(GREETING) :]
            self.owner._greeted(self)
        if data:
            self.owner._received(data)

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        self.owner._disconnected(self, reason)


class _Links(Factory):
    noisy = False  # a connection a restart is not worth two log lines

    def __init__(self, owner: WriterConnection) -> None:
        self.owner = owner

    def buildProtocol(self, addr: IAddress | None) -> _Link:
        return _Link(self.owner)


class WriterConnection(FramedWriter):
    def __init__(self, reactor: Any, name: str) -> None:
        super().__init__(reactor)
        self._endpoint = UNIXClientEndpoint(reactor, "\0" + name)
        self._name = name
        self._link: _Link | None = None
        self._retry = FIRST_RETRY
        self._retry_call: IDelayedCall | None = None
        self._ended: Deferred[None] | None = None
        self._warned = False
        self._lost_since: float | None = None
        self._connect()

    @property
    def linked(self) -> bool:
        link = self._link
        return link is not None and link.greeted and link.transport is not None

    def _connect(self) -> None:
        self._retry_call = None
        d = self._endpoint.connect(_Links(self))
        d.addCallbacks(self._linked, self._not_linked)

    def _linked(self, link: _Link) -> None:
        if self._stopping:
            assert link.transport is not None
            link.transport.loseConnection()
            return
        self._link = link

    def _greeted(self, link: _Link) -> None:
        if link is self._link:
            self._retry, self._warned, self._lost_since = FIRST_RETRY, False, None
            if self._outbox:
                self._schedule()

    def _not_linked(self, failure: Failure) -> None:
        if self._stopping:
            return
        now = timer_clock(self._reactor)()
        if self._lost_since is None:
            self._lost_since = now
        if not self._warned and now - self._lost_since >= WARN_AFTER:
            log.warn(
                "the LMDB writer at @{name} does not answer ({why}); retrying",
                name=self._name,
                why=failure.getErrorMessage(),
            )
            self._warned = True
        self._retry_call = self._reactor.callLater(self._retry, self._connect)
        self._retry = min(LAST_RETRY, self._retry * 2)

    def _disconnected(self, link: _Link, reason: Failure) -> None:
        if link is not self._link:
            return
        self._link = None
        if self._stopping:
            self._link_lost("the server is stopping")
            if self._ended is not None:
                self._ended.callback(None)
            return
        if not link.greeted:  # a writer that had died: it carried nothing
            self._not_linked(reason)
            return
        why = reason.getErrorMessage()
        log.warn("lost the LMDB writer ({why}); connecting again", why=why)
        self._link_lost(f"the LMDB writer went away ({why})")
        self._retry_call = self._reactor.callLater(0, self._connect)

    def _write(self, data: bytes) -> bool:
        assert self._link is not None and self._link.transport is not None
        write_now(self._link.transport, data)
        return True

    def _abort(self) -> None:
        transport: Any = self._link.transport if self._link is not None else None
        if transport is not None:
            transport.abortConnection()

    def stop(self) -> Deferred[None]:
        """Close the connection (the writer itself is the supervisor's); fires once
        closed."""
        self._stopping = True
        if self._retry_call is not None and self._retry_call.active():
            self._retry_call.cancel()
        self._ended = Deferred()
        if self._link is None or self._link.transport is None:
            self._ended.callback(None)
        else:
            self._link.transport.loseConnection()
        return self._ended
