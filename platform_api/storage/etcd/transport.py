"""Connections to etcd's gRPC endpoints, on the reactor: one HTTP/2 connection per endpoint,
every call a stream on it (grpcwire.py speaks the protocol).

Why not grpcio (README "etcd client"): its calls complete on its own threads, which take the
GIL from a busy reactor and hand each result back with ``callFromThread``; in the server
that cost ~0.35 ms of CPU per create (1.39-1.50 ms against 1.05-1.13 ms here).  On the
reactor a call is an h2 stream and a few protocol events.

A call goes to the endpoint that last answered and moves on when it cannot be made there:
reads always; writes only when no connection could be made (nothing was sent, so the write
cannot happen twice).  Otherwise the caller sees ``Unavailable`` and decides (a CAS re-reads).
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import h2.events
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol, wrapClientTLS
from twisted.internet.error import ConnectError
from twisted.internet.protocol import Protocol as TwistedProtocol
from twisted.internet.ssl import Certificate, PrivateCertificate, optionsForClientTLS
from twisted.python.failure import Failure

from platform_api.storage.etcd import proto
from platform_api.storage.etcd.errors import Unavailable, from_status
from platform_api.storage.etcd.grpcwire import (
    DEADLINE_EXCEEDED,
    OK,
    UNAVAILABLE,
    Ended,
    GrpcConnection,
    Message,
)

KEEPALIVE, KEEPALIVE_TIMEOUT = 30.0, 10.0  # seconds, as the grpcio client had them


@dataclass(frozen=True)
class TLSConfig:
    """``--etcd-cafile``, ``--etcd-certfile`` and ``--etcd-keyfile``: their paths and PEM."""

    cafile: str = ""
    certfile: str = ""
    keyfile: str = ""
    ca_pem: bytes | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None

    @classmethod
    def from_files(cls, cafile: str = "", certfile: str = "", keyfile: str = "") -> TLSConfig:
        """Read at start-up (kube reads these files once too)."""

        def read(path: str) -> bytes | None:
            if not path:
                return None
            with open(path, "rb") as f:
                return f.read()

        return cls(cafile, certfile, keyfile, read(cafile), read(certfile), read(keyfile))


class CallHandler(Protocol):
    """Where a stream's messages and its end go."""

    def message(self, message: Message) -> None: ...

    def ended(self, code: int, detail: str) -> None: ...


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, endpoint: str) -> Target:
        parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
        scheme = "https" if parts.scheme == "https" else "http"
        return cls(scheme, parts.hostname or "127.0.0.1", parts.port or 2379)

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"


class Stream:
    """One call's stream: send messages on it, give back what was read, or cancel it."""

    def __init__(self, connection: GrpcChannel, stream_id: int) -> None:
        self.connection, self.stream_id = connection, stream_id

    def send(self, message: bytes, *, end: bool = False) -> None:
        self.connection.wire.send(self.stream_id, message, end=end)
        self.connection.flush()

    def pause(self) -> None:
        self.connection.wire.pause(self.stream_id)

    def resume(self) -> None:
        self.connection.wire.resume(self.stream_id)
        self.connection.flush()

    def cancel(self) -> None:
        self.connection.forget(self.stream_id)


class GrpcChannel(TwistedProtocol):
    """One HTTP/2 connection to an etcd member; ``open`` starts a call on it."""

    def __init__(self, target: Target, reactor: Any) -> None:
        self.wire = GrpcConnection(target.authority, target.scheme)
        self.reactor = reactor
        self.calls: dict[int, CallHandler] = {}
        self.lost = False
        self._keepalive: Any = None
        self._ping_deadline: Any = None

    @property
    def usable(self) -> bool:
        return not self.lost and not self.wire.going_away

    def connectionMade(self) -> None:
        # Calls are small writes answered at once: Nagle would hold each for an ACK.
        transport: Any = self.transport
        while transport is not None and not hasattr(transport, "setTcpNoDelay"):
            transport = getattr(transport, "transport", None)  # under TLS: the TCP one
        if transport is not None:
            transport.setTcpNoDelay(True)
        self.flush()
        self._keepalive = self.reactor.callLater(KEEPALIVE, self._ping)

    def open(self, path: str, handler: CallHandler, timeout: float | None = None) -> Stream:
        stream_id = self.wire.open(path, timeout)
        self.calls[stream_id] = handler
        return Stream(self, stream_id)

    def forget(self, stream_id: int) -> None:
        """Cancel a call: RST_STREAM, and no end is reported for it."""
        if self.calls.pop(stream_id, None) is not None and not self.lost:
            self.wire.cancel(stream_id)
            self.flush()

    def flush(self) -> None:
        data = self.wire.data_to_send()
        if data and not self.lost:
            self.transport.write(data)  # type: ignore[union-attr]

    def dataReceived(self, data: bytes) -> None:
        try:
            events = self.wire.receive(data)
        except Exception as e:  # a protocol violation: this connection is over
            self._end_all(f"etcd connection broken: {e}")
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        for event in events:
            if isinstance(event, Message):
                handler = self.calls.get(event.stream_id)
                if handler is not None:
                    handler.message(event)
            elif isinstance(event, Ended):
                ended = self.calls.pop(event.stream_id, None)
                if ended is not None:
                    ended.ended(event.code, event.message)
            elif isinstance(event, h2.events.PingAckReceived):
                self._pong()
            elif isinstance(event, h2.events.ConnectionTerminated):
                # GOAWAY: streams it did not take may go elsewhere; then close
                last = event.last_stream_id or 0
                for stream_id in [s for s in self.calls if s > last]:
                    self.calls.pop(stream_id).ended(UNAVAILABLE, "etcd went away")
                if not self.calls:
                    self.transport.loseConnection()  # type: ignore[union-attr]
        self.flush()

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        self.lost = True
        for timer in (self._keepalive, self._ping_deadline):
            if timer is not None and timer.active():
                timer.cancel()
        self._end_all(f"etcd connection lost: {reason.getErrorMessage()}")

    def _end_all(self, detail: str) -> None:
        self.lost = True
        calls, self.calls = self.calls, {}
        for handler in calls.values():
            handler.ended(UNAVAILABLE, detail)

    def _ping(self) -> None:
        self.wire.ping(b"keepaliv")
        self.flush()
        self._ping_deadline = self.reactor.callLater(KEEPALIVE_TIMEOUT, self._silent)

    def _pong(self) -> None:
        if self._ping_deadline is not None and self._ping_deadline.active():
            self._ping_deadline.cancel()
            self._keepalive = self.reactor.callLater(KEEPALIVE, self._ping)

    def _silent(self) -> None:
        self._end_all("etcd did not answer a keepalive ping")
        self.transport.abortConnection()  # type: ignore[union-attr]


class _Unary:
    """A unary call's handler: its one message, then success or a status."""

    def __init__(self) -> None:
        self.done: defer.Deferred[bytes] = defer.Deferred()
        self.data = b""

    def message(self, message: Message) -> None:
        self.data = message.data

    def ended(self, code: int, detail: str) -> None:
        if self.done.called:
            return
        if code == OK:
            self.done.callback(self.data)
        else:
            self.done.errback(CallFailed(code, detail))


class CallFailed(Exception):
    def __init__(self, code: int, detail: str) -> None:
        super().__init__(code, detail)
        self.code, self.detail = code, detail


class Transport:
    """The endpoints' connections; ``call`` is a unary call with failover."""

    def __init__(
        self,
        endpoints: Sequence[str],
        reactor: Any,
        *,
        tls: TLSConfig | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.endpoints = list(endpoints)
        self.targets = [Target.parse(e) for e in endpoints]
        self.reactor = reactor
        self.tls = tls or TLSConfig()
        self.timeout = timeout
        self.current = 0
        self._channels: list[GrpcChannel | None] = [None] * len(endpoints)
        self._connecting: list[list[defer.Deferred[GrpcChannel]] | None] = [None] * len(endpoints)
        self._closed = False

    def channel(self, index: int) -> defer.Deferred[GrpcChannel]:
        """The connection to endpoint ``index``, made if there is none (ConnectError if it
        cannot be: then nothing was sent)."""
        existing = self._channels[index]
        if existing is not None and existing.usable:
            return defer.succeed(existing)
        waiter: defer.Deferred[GrpcChannel] = defer.Deferred()
        waiting = self._connecting[index]
        if waiting is not None:
            waiting.append(waiter)
            return waiter
        self._connecting[index] = [waiter]
        target = self.targets[index]
        endpoint: Any = HostnameEndpoint(self.reactor, target.host, target.port, self.timeout)
        if target.scheme == "https":
            endpoint = wrapClientTLS(self._tls_options(target), endpoint)
        made = connectProtocol(endpoint, GrpcChannel(target, self.reactor))
        made.addBoth(self._connected, index)
        return waiter

    def _connected(self, result: GrpcChannel | Failure, index: int) -> None:
        waiters, self._connecting[index] = self._connecting[index] or [], None
        if isinstance(result, GrpcChannel):
            if self._closed:
                result.transport.abortConnection()  # type: ignore[union-attr]
            self._channels[index] = result
        for waiter in waiters:
            waiter.callback(result) if isinstance(result, GrpcChannel) else waiter.errback(result)

    def _tls_options(self, target: Target) -> Any:
        tls = self.tls
        trust = Certificate.loadPEM(tls.ca_pem) if tls.ca_pem else None
        client = None
        if tls.cert_pem and tls.key_pem:
            client = PrivateCertificate.loadPEM(tls.key_pem + b"\n" + tls.cert_pem)
        return optionsForClientTLS(
            target.host, trustRoot=trust, clientCertificate=client, acceptableProtocols=[b"h2"]
        )

    async def unary(self, index: int, path: str, request: Any) -> Any:
        """One call on endpoint ``index``: its response message, or CallFailed."""
        channel = await self.channel(index)
        handler = _Unary()
        stream = channel.open(path, handler, self.timeout)
        stream.send(request.SerializeToString(), end=True)
        done = handler.done

        def expire() -> None:
            stream.cancel()
            handler.ended(DEADLINE_EXCEEDED, "context deadline exceeded")

        timer = self.reactor.callLater(self.timeout, expire)
        try:
            data = await done
        finally:
            if timer.active():
                timer.cancel()
        return proto.UNARY[path].FromString(data)

    async def call(self, path: str, request: Any, *, read_only: bool) -> Any:
        """The response message of ``path``; raises an ``EtcdError``."""
        detail = ""
        for attempt in range(len(self.targets)):
            index = (self.current + attempt) % len(self.targets)
            try:
                response = await self.unary(index, path, request)
            except ConnectError as e:
                detail = f"failed to connect to {self.endpoints[index]}: {e}"
                continue
            except CallFailed as e:
                detail = e.detail
                if e.code == UNAVAILABLE and read_only:
                    continue
                raise from_status(e.code, e.detail) from None
            self.current = index
            return response
        raise Unavailable(f"no etcd endpoint answered: {detail}", UNAVAILABLE)

    def call_blocking(self, path: str, request: Any) -> Any:
        """A unary call on a socket of its own, waited for: only at start, before the
        reactor runs. Tries every endpoint; raises Unavailable when none answers."""
        detail = ""
        for attempt in range(len(self.targets)):
            index = (self.current + attempt) % len(self.targets)
            try:
                data = _blocking_call(self.targets[index], self.tls, path, request, self.timeout)
            except (OSError, CallFailed) as e:
                detail = str(e)
                continue
            self.current = index
            return proto.UNARY[path].FromString(data)
        raise Unavailable(f"no etcd endpoint answered: {detail}", UNAVAILABLE)

    def close(self) -> None:
        self._closed = True
        for channel in self._channels:
            if channel is not None and not channel.lost:
                channel.transport.abortConnection()  # type: ignore[union-attr]


def _blocking_call(
    target: Target, tls: TLSConfig, path: str, request: Any, timeout: float
) -> bytes:
    sock: socket.socket = socket.create_connection((target.host, target.port), timeout)
    try:
        if target.scheme == "https":
            context = ssl.create_default_context(cafile=tls.cafile or None)
            if tls.certfile:
                context.load_cert_chain(tls.certfile, tls.keyfile or None)
            context.set_alpn_protocols(["h2"])
            sock = context.wrap_socket(sock, server_hostname=target.host)
        wire = GrpcConnection(target.authority, target.scheme)
        stream_id = wire.open(path, timeout)
        wire.send(stream_id, request.SerializeToString(), end=True)
        data = b""
        while True:
            sock.sendall(wire.data_to_send())
            received = sock.recv(1 << 20)
            if not received:
                raise CallFailed(UNAVAILABLE, "etcd closed the connection")
            for event in wire.receive(received):
                if isinstance(event, Message):
                    data = event.data
                elif isinstance(event, Ended):
                    if event.code != OK:
                        raise CallFailed(event.code, event.message)
                    return data
    finally:
        sock.close()
