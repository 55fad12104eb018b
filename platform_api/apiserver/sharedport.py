"""Accepting on a listening socket that several workers share, spreading connections
over them (least connections first).

Every worker's reactor is woken when a connection arrives and the fastest one takes it;
Twisted's port would then accept up to a hundred more in the same turn.  Keep-alive
clients that connect together (a controller's informers, a load generator) could all
land on one worker and leave the others idle.  So each worker writes how many
connections it holds into a small shared file (``ConnectionBoard``); a worker that holds
more than another stands aside for a millisecond while a less loaded sibling accepts,
at most a few times in a row (a sibling that is busy or gone cannot stall accepting),
and a worker accepts one connection per turn.
"""

from __future__ import annotations

import mmap
import os
import socket
import struct
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.task import LoopingCall

from platform_api.apiserver.eagerwrite import EagerPort

STAND_ASIDE = 0.001  # seconds a busier worker leaves a new connection to its siblings
MAX_WAITS = 3  # then it accepts anyway
# How often a worker republishes its count, for the connections that closed since it
# accepted one (a stale count only makes it stand aside a moment longer): an idle
# worker's timer wakes cost it CPU.
REFRESH = 1.0
_SLOT = struct.Struct("<i")


class ConnectionBoard:
    """How many connections each worker holds, in a file every worker maps."""

    def __init__(self, path: str, index: int, count: int) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < _SLOT.size * count:
                os.ftruncate(fd, _SLOT.size * count)
            self._map = mmap.mmap(fd, _SLOT.size * count)
        finally:
            os.close(fd)
        self.index, self.count = index, count
        self.publish(0)

    def publish(self, held: int) -> None:
        _SLOT.pack_into(self._map, _SLOT.size * self.index, held)

    def fewest_elsewhere(self) -> int | None:
        """The fewest connections a sibling holds (None: no siblings)."""
        others = [
            _SLOT.unpack_from(self._map, _SLOT.size * i)[0]
            for i in range(self.count)
            if i != self.index
        ]
        return min(others) if others else None


class SharedPort(EagerPort):
    """A port on an inherited listening socket, accepting as the board says."""

    clock: IReactorTime
    board: ConnectionBoard
    refresh: LoopingCall | None = None
    _resume: IDelayedCall | None = None
    _waited = 0

    def held(self) -> int:
        return len(getattr(self.factory, "protocols", ()))

    def publish(self) -> None:
        self.board.publish(self.held())

    def doRead(self) -> None:
        held = self.held()
        self.board.publish(held)
        fewest = self.board.fewest_elsewhere()
        if fewest is not None and held > fewest and self._waited < MAX_WAITS:
            self._waited += 1
            self.stopReading()
            self._resume = self.clock.callLater(STAND_ASIDE, self._accept_again)
            return
        self._waited = 0
        self.numberAccepts = 1
        super().doRead()
        self.publish()

    def _accept_again(self) -> None:
        self._resume = None
        if self.connected and not self.disconnecting:
            self.startReading()

    def connectionLost(self, reason: Any) -> None:
        if self._resume is not None and self._resume.active():
            self._resume.cancel()
        self._resume = None
        if self.refresh is not None and self.refresh.running:
            self.refresh.stop()
        super().connectionLost(reason)


def adopt_shared(
    reactor: Any, fd: int, factory: Any, board: ConnectionBoard, clock: IReactorTime | None = None
) -> SharedPort:
    """Listen on ``fd`` (a socket other workers also accept on); the caller's copy of
    the descriptor is closed, as the port holds its own."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        family = sock.family
    port = SharedPort._fromListeningDescriptor(reactor, fd, family, factory)
    port.clock = clock or reactor
    port.board = board
    port.startListening()
    os.close(fd)
    port.refresh = LoopingCall(port.publish)
    port.refresh.clock = port.clock
    port.refresh.start(REFRESH, now=False)
    return port
