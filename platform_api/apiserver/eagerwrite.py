"""TCP connections that send a write at once when nothing is queued before it
(platform_api/eager.py says why)."""

from __future__ import annotations

from typing import Any

from twisted.internet import tcp

from platform_api.eager import write_eagerly


class EagerServer(tcp.Server):
    """A server-side connection whose writes skip the queue when it is empty."""

    def write(self, data: bytes) -> None:
        write_eagerly(self, data, super().write)


class EagerPort(tcp.Port):
    """A listening port whose connections are ``EagerServer``s."""

    transport = EagerServer


def listen_eager(reactor: Any, port: int, factory: Any, interface: str = "") -> EagerPort:
    """``reactor.listenTCP`` with eager connections (raises CannotListenError)."""
    listening = EagerPort(port, factory, 50, interface, reactor)
    listening.startListening()
    return listening
