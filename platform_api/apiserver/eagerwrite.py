"""TCP connections that send a write at once when nothing is queued before it
(platform_api/eager.py says why), with kube's TCP keepalive."""

from __future__ import annotations

import socket
from typing import Any

from twisted.internet import tcp

from platform_api.eager import write_eagerly

# Go's listener turns TCP keepalive on for every accepted connection, probing after 15 s
# of silence every 15 s: a client gone without a word (its machine off, its network cut)
# is found and its watches end rather than waiting out their timeouts.
KEEPALIVE_SECONDS = 15


class EagerServer(tcp.Server):
    """A server-side connection whose writes skip the queue when it is empty."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for option in ("TCP_KEEPIDLE", "TCP_KEEPINTVL"):  # Linux's names
            if hasattr(socket, option):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), KEEPALIVE_SECONDS)

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
