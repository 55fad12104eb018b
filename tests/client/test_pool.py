"""The client pool never reuses a connection an HTTP/1.0 answer did not keep alive."""

from __future__ import annotations

from typing import Any

import pytest_twisted
import treq
from twisted.internet import reactor as default_reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.web.client import Agent

from platform_api.client.pool import ConnectionPool


class _Http10(Protocol):
    """Answers as HTTP/1.0.  Without ``keep`` (no keep-alive) it answers one request and
    closes only a while later, as a server whose close the client has not seen yet: a
    second request on the connection gets no answer.  With ``keep`` it answers all."""

    def connectionMade(self) -> None:
        self.buffer = b""
        self.answered = False
        self.factory.connections += 1

    def dataReceived(self, data: bytes) -> None:
        self.buffer += data
        if b"\r\n\r\n" not in self.buffer:
            return
        self.buffer = b""
        if self.answered:
            self.factory.reused += 1
            if not self.factory.keep:
                return
        self.answered = True
        keep = b"Connection: keep-alive\r\n" if self.factory.keep else b""
        self.transport.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n" + keep + b"\r\nok")
        if not self.factory.keep:
            default_reactor.callLater(0.3, self.transport.loseConnection)


class _Server(Factory):
    protocol = _Http10

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.connections = 0
        self.reused = 0


async def _two_posts(keep: bool) -> _Server:
    server = _Server(keep)
    port = default_reactor.listenTCP(0, server, interface="127.0.0.1")
    pool = ConnectionPool(default_reactor, 4)
    client = treq.client.HTTPClient(Agent(default_reactor, pool=pool))
    url = f"http://127.0.0.1:{port.getHost().port}/"
    try:
        for _ in range(2):
            reply: Any = await client.post(url, data=b"{}", timeout=2)
            assert await reply.content() == b"ok"
    finally:
        await pool.closeCachedConnections()
        await port.stopListening()
    return server


@pytest_twisted.ensureDeferred
async def test_an_http10_answer_closes_the_connection_for_the_pool() -> None:
    server = await _two_posts(keep=False)
    assert (server.connections, server.reused) == (2, 0)


@pytest_twisted.ensureDeferred
async def test_an_http10_answer_that_asks_to_keep_alive_is_kept() -> None:
    server = await _two_posts(keep=True)
    assert (server.connections, server.reused) == (1, 1)
