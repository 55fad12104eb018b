"""Eager writes: a write with nothing queued before it is sent at once; the rest is
queued as Twisted queues it (a real socket on loopback, the real reactor)."""

from __future__ import annotations

import socket
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import deferLater
from twisted.internet.testing import StringTransport
from twisted.internet.threads import deferToThread

from platform_api.apiserver.eagerwrite import EagerServer, listen_eager
from platform_api.eager import write_now


class _Held(Protocol):
    """Hands its connection to the test and keeps what it is told about the end."""

    def __init__(self, made: Deferred[Any], lost: Deferred[Any]) -> None:
        self.made, self.lost = made, lost

    def connectionMade(self) -> None:
        self.made.callback(self)

    def connectionLost(self, reason: Any = None) -> None:
        self.lost.callback(reason.type)


async def _pair() -> tuple[Any, socket.socket, Any, Deferred[Any]]:
    made: Deferred[Any] = Deferred()
    lost: Deferred[Any] = Deferred()
    port = listen_eager(reactor, 0, Factory.forProtocol(lambda: _Held(made, lost)), "127.0.0.1")
    client = socket.create_connection(("127.0.0.1", port.getHost().port))
    protocol = await made
    return protocol.transport, client, port, lost


def _read(client: socket.socket, size: int) -> bytes:
    client.settimeout(5)
    out = b""
    while len(out) < size:
        chunk = client.recv(min(size - len(out), 1 << 20))
        if not chunk:
            break
        out += chunk
    return out


@pytest_twisted.ensureDeferred
async def test_a_write_with_nothing_queued_is_sent_before_write_returns() -> None:
    transport, client, port, _ = await _pair()
    try:
        assert isinstance(transport, EagerServer)
        transport.write(b"hello")
        assert (transport._tempDataBuffer, transport.dataBuffer) == ([], b"")
        assert _read(client, 5) == b"hello"  # the reactor has not run since the write
    finally:
        client.close()
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_what_the_socket_does_not_take_is_queued_and_arrives_in_order() -> None:
    transport, client, port, _ = await _pair()
    big = bytes(range(256)) * 80_000  # ~20 MB: more than both socket buffers hold
    try:
        transport.write(big)
        assert transport._tempDataLen > 0  # the rest waits for the reactor
        transport.write(b"after")  # behind the queue, never before it
        assert transport._tempDataBuffer[-1] == b"after"
        received = await deferToThread(_read, client, len(big) + 5)
        assert received == big + b"after"
    finally:
        client.close()
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_a_write_to_a_closed_peer_loses_the_connection_without_raising() -> None:
    transport, client, port, lost = await _pair()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    client.close()  # a reset, not a clean end
    try:
        await deferLater(reactor, 0.05, lambda: None)  # type: ignore[arg-type]
        for _ in range(3):
            transport.write(b"x" * 1000)
        await lost
        assert not transport.connected
    finally:
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_a_closing_connection_sends_what_was_written_then_ends() -> None:
    transport, client, port, lost = await _pair()
    try:
        transport.write(b"last words")
        transport.loseConnection()
        transport.write(b" ignored?")  # after loseConnection: queued, as Twisted queues it
        await lost
        assert _read(client, 100) == b"last words ignored?"
    finally:
        client.close()
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_write_now_sends_on_a_plain_tcp_connection_and_writes_on_others() -> None:
    made: Deferred[Any] = Deferred()
    port = reactor.listenTCP(  # type: ignore[attr-defined]
        0, Factory.forProtocol(lambda: _Held(made, Deferred())), interface="127.0.0.1"
    )
    client = socket.create_connection(("127.0.0.1", port.getHost().port))
    try:
        transport = (await made).transport  # Twisted's own TCP connection, not an eager one
        write_now(transport, b"hello")
        assert (transport._tempDataBuffer, transport.dataBuffer) == ([], b"")
        assert _read(client, 5) == b"hello"  # the reactor has not run since the write
        other = StringTransport()
        write_now(other, b"queued as ever")
        assert other.value() == b"queued as ever"
    finally:
        client.close()
        await port.stopListening()
