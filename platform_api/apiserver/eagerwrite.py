"""TCP connections that send a write at once when nothing is queued before it.

Twisted's transports queue every write and send it when the reactor next finds the
socket writable: per response one ``epoll_ctl`` to watch for writability, a reactor
turn to notice it, the ``send``, and another ``epoll_ctl`` to stop watching.  A
response the socket can take at once (nearly all: the send buffer is empty between
requests) now goes out in the ``send`` alone; what the socket does not take is queued
as before, so ordering, back-pressure on producers and error handling stay Twisted's.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import tcp


class EagerServer(tcp.Server):
    """A server-side connection whose writes skip the queue when it is empty."""

    def write(self, data: bytes) -> None:
        if (
            data
            and not self._tempDataBuffer
            and self.offset == len(self.dataBuffer)
            and self.connected
            and not self.disconnecting
            and not self._writeDisconnected
            and type(data) is bytes
        ):
            try:
                sent = self.socket.send(data)
            except OSError:
                sent = 0  # would block, or broken: the queued path finds out and reports it
            if sent == len(data):
                return
            data = data[sent:]
        super().write(data)


class EagerPort(tcp.Port):
    """A listening port whose connections are ``EagerServer``s."""

    transport = EagerServer


def listen_eager(reactor: Any, port: int, factory: Any, interface: str = "") -> EagerPort:
    """``reactor.listenTCP`` with eager connections (raises CannotListenError)."""
    listening = EagerPort(port, factory, 50, interface, reactor)
    listening.startListening()
    return listening
