"""Eager writes: a write with nothing queued before it is sent at once; the rest is
queued as Twisted queues it (a real socket on loopback, the real reactor)."""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol, wrapClientTLS
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.ssl import Certificate, CertificateOptions, optionsForClientTLS
from twisted.internet.task import deferLater
from twisted.internet.testing import StringTransport
from twisted.internet.threads import deferToThread

from platform_api.apiserver import pki
from platform_api.apiserver.eagerwrite import EagerServer, listen_eager
from platform_api.eager import send_eagerly, write_now
from platform_api.pem import certificate_options


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


class _Collected(Protocol):
    """A TLS server's side: what it reads, handed over once ``size`` bytes are in."""

    def __init__(self, size: int, done: Deferred[bytes], made: Deferred[Any]) -> None:
        self.size, self.done, self.made, self.got = size, done, made, b""

    def connectionMade(self) -> None:
        self.made.callback(self.transport.transport.socket)  # type: ignore[union-attr]

    def dataReceived(self, data: bytes) -> None:
        self.got += data
        if len(self.got) >= self.size and not self.done.called:
            self.done.callback(self.got)


def _unread(sock: socket.socket) -> int:
    """Bytes waiting in a socket's receive queue (FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0]


@pytest_twisted.ensureDeferred
async def test_write_now_under_tls_hands_the_records_to_an_eager_tcp_connection(
    tmp_path: Any,
) -> None:
    """A TLS client (an etcd connection): the records of a write reach the peer's socket
    before ``write_now`` returns, not a turn later through TLS's aggregation."""
    paths = pki.ensure_pki(str(tmp_path), "127.0.0.1")
    serving = certificate_options(
        Path(paths.serving_key).read_bytes(), Path(paths.serving_cert).read_bytes()
    )
    received: Deferred[bytes] = Deferred()
    accepted: Deferred[Any] = Deferred()
    server = reactor.listenSSL(  # type: ignore[attr-defined]
        0,
        Factory.forProtocol(lambda: _Collected(10, received, accepted)),
        CertificateOptions(**serving),
        interface="127.0.0.1",
    )
    trust = Certificate.loadPEM(Path(paths.ca_cert).read_bytes())
    endpoint = wrapClientTLS(
        optionsForClientTLS("127.0.0.1", trustRoot=trust),
        HostnameEndpoint(reactor, "127.0.0.1", server.getHost().port),
    )
    client = await connectProtocol(endpoint, Protocol())
    try:
        peer = await accepted
        tls = client.transport
        send_eagerly(tls.transport)  # the TCP connection under TLS
        await deferLater(reactor, 0.1, lambda: None)  # type: ignore[arg-type]  # handshake
        assert _unread(peer) == 0
        write_now(tls, b"hello")
        assert _unread(peer) > 0  # the reactor has not run since the write
        await deferLater(reactor, 0.05, lambda: None)  # type: ignore[arg-type]
        assert _unread(peer) == 0
        tls.write(b"world")  # TLS's own write: aggregated, sent after this turn
        assert _unread(peer) == 0
        assert await received == b"helloworld"
    finally:
        client.transport.abortConnection()
        await server.stopListening()


@pytest_twisted.ensureDeferred
async def test_accepted_connections_have_kubes_tcp_keepalive() -> None:
    """Go's listener probes a silent peer after 15 s, every 15 s: a client gone without a
    word is found and its watches end."""
    server, client, port, lost = await _pair()
    try:
        sock = server.socket
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 15
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 15
    finally:
        client.close()
        await lost
        await port.stopListening()
