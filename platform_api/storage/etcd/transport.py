"""etcd's gRPC endpoints, on the reactor: one connection per endpoint (channel.py), made
when first needed, and unary calls on them with deadlines and failover.

Why not grpcio (README "etcd client"): its calls complete on its own threads, which take the
GIL from a busy reactor and hand each result back with ``callFromThread``; in the server
that cost ~0.35 ms of CPU per create (1.39-1.50 ms against 1.05-1.13 ms here on h2; 0.83-0.87
ms now, on our own HTTP/2 framing).  On the reactor a call is an HTTP/2 stream, a few frames.

A call goes to the endpoint that last answered and moves on when it cannot be made there:
reads always; writes only when no connection could be made (nothing was sent, so the write
cannot happen twice).  Otherwise the caller sees ``Unavailable`` and decides (a CAS re-reads).
A connection counts as made once etcd has greeted it, so a member that takes connections
but does not answer (stopped, hung, cut off behind a proxy) is passed over, as gRPC passes
over a connection that is not ready.  A call that fails on the endpoint that last answered
(its connection lost, or no answer by the deadline) moves the next calls on to the next
endpoint, and a deadline probes that connection: etcd's client spreads calls over every
endpoint, so one hung member costs kube a share of its calls until keepalive drops it;
here it costs the calls already sent to it.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint, wrapClientTLS
from twisted.internet.error import ConnectError
from twisted.internet.protocol import Factory
from twisted.internet.ssl import Certificate, optionsForClientTLS
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.pem import certificate_options
from platform_api.storage import spans
from platform_api.storage.etcd import grpcmetrics, proto
from platform_api.storage.etcd.channel import GrpcChannel, Stream
from platform_api.storage.etcd.deadlines import Deadlines
from platform_api.storage.etcd.endpoint import Target
from platform_api.storage.etcd.errors import Unavailable, from_status
from platform_api.storage.etcd.grpcwire import (
    CANCELLED,
    DEADLINE_EXCEEDED,
    OK,
    UNAVAILABLE,
    Ended,
    GrpcConnection,
    Message,
)
from platform_api.storage.etcd.http2 import ProtocolError
from platform_api.timers import timer_clock

log = Logger()
# kube traces an etcd request slower than this (its "took too long" warnings): one that
# waits this long is the storage's, not the server's, and the log says which.
SLOW_CALL = 1.0
# Seconds a new connection has for etcd's HTTP/2 greeting (a member's SETTINGS come at once).
HANDSHAKE = 3.0
# Seconds a connection has to answer a ping once a call on it ran past its deadline.
PROBE_TIMEOUT = 2.0
# While no endpoint can take a call: seconds between attempts, and how long the server
# keeps on (kube's default --request-timeout: requests time out first).
RETRY_INTERVAL = 0.1
RETRY_FOR = 60.0


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


class _Unary:
    """A unary call's handler: its one message, then success or a status."""

    def __init__(self) -> None:
        self.done: defer.Deferred[bytes] = defer.Deferred()
        self.data = b""
        self.stream: Stream | None = None

    def over(self) -> bool:
        return self.done.called

    def expire(self) -> None:
        if self.stream is not None:
            self.stream.cancel(DEADLINE_EXCEEDED)
        self.ended(DEADLINE_EXCEEDED, "context deadline exceeded")

    def message(self, message: Message) -> None:
        self.data = message.data

    def ended(self, code: int, detail: str) -> None:
        if self.done.called:
            return
        if code == OK:
            self.done.callback(self.data)
        else:
            self.done.errback(CallFailed(code, detail))


def _told_ok(data: bytes, traced: spans.GrpcCall) -> bytes:
    traced.received(len(data))
    traced.end(OK, "")
    return data


def _told_failed(failure: Failure, traced: spans.GrpcCall) -> Failure:
    error = failure.value
    if isinstance(error, CallFailed):
        traced.end(error.code, error.detail)
    else:
        traced.end(CANCELLED, str(error))
    return failure


class CallFailed(Exception):
    def __init__(self, code: int, detail: str) -> None:
        super().__init__(code, detail)
        self.code, self.detail = code, detail


class _QuietFactory(Factory):
    """Builds the one channel of a connection attempt, without Twisted's "Starting
    factory" log lines (two per connection, many while a member comes and goes)."""

    noisy = False

    def __init__(self, channel: GrpcChannel) -> None:
        self.channel = channel

    def buildProtocol(self, addr: Any) -> GrpcChannel:
        return self.channel


class Transport:
    """The endpoints' connections; ``call`` is a unary call with failover."""

    def __init__(
        self,
        endpoints: Sequence[str],
        reactor: Any,
        *,
        tls: TLSConfig | None = None,
        timeout: float = 10.0,
        retry_for: float = 0.0,
    ) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.retry_for = retry_for
        self.endpoints = list(endpoints)
        self.targets = [Target.parse(e) for e in endpoints]
        self.reactor = reactor
        self.clock = timer_clock(reactor)
        self.tls = tls or TLSConfig()
        self.timeout = timeout
        self.current = 0
        self._channels: list[GrpcChannel | None] = [None] * len(endpoints)
        self._connecting: list[list[defer.Deferred[GrpcChannel]] | None] = [None] * len(endpoints)
        self._waiting: list[defer.Deferred[None]] | None = None  # calls waiting to retry
        self._deadlines = Deadlines(reactor, timeout)
        self._closed = False

    def rotation(self) -> list[int]:
        """Endpoint indexes to try, in order: the one that last answered first."""
        count = len(self.targets)
        return [(self.current + step) % count for step in range(count)]

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
        made = endpoint.connect(_QuietFactory(GrpcChannel(target, self.reactor)))
        made.addCallback(self._greeted)
        made.addBoth(self._connected, index)
        return waiter

    def _greeted(self, channel: GrpcChannel) -> defer.Deferred[GrpcChannel]:
        """``channel`` once etcd has greeted it; ConnectError (nothing sent) if it does not
        within HANDSHAKE seconds."""
        limit = min(HANDSHAKE, self.timeout)

        def failed(failure: Failure) -> Failure:
            if not channel.lost:
                channel.transport.abortConnection()  # type: ignore[union-attr]
            if failure.check(defer.TimeoutError):
                why = f"etcd did not answer the connection within {limit:g}s"
                return Failure(ConnectError(string=why))
            return failure

        greeting = channel.greeting.addTimeout(limit, self.reactor)
        return greeting.addErrback(failed)

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
        client = {}
        if tls.cert_pem and tls.key_pem:
            client = certificate_options(tls.key_pem, tls.cert_pem)
        return optionsForClientTLS(
            target.host,
            trustRoot=trust,
            acceptableProtocols=[b"h2"],
            extraCertificateOptions=client,
        )

    async def unary(self, index: int, path: str, request: Any) -> Any:
        """One call on endpoint ``index`` (``request`` a message or its bytes): its response
        message, or CallFailed."""
        channel = self._channels[index]
        if channel is None or not channel.usable:
            channel = await self.channel(index)
        payload = request if isinstance(request, bytes) else request.SerializeToString()
        target = self.targets[index]
        handler = _Unary()
        traced = spans.grpc_call(path[1:], target.host, target.port)
        if traced is not None:
            traced.sent(len(payload))
            handler.done.addCallbacks(
                _told_ok, _told_failed, callbackArgs=(traced,), errbackArgs=(traced,)
            )
        stream = handler.stream = channel.open(path, handler, self.timeout)
        stream.send(payload, end=True)
        started = self.clock()
        self._deadlines.add(handler, started)
        try:
            data = await handler.done
        finally:
            took = self.clock() - started
            if took >= SLOW_CALL:
                log.warn(
                    "etcd request {path} to {endpoint} took too long ({took:.3f}s)",
                    path=path,
                    endpoint=self.endpoints[index],
                    took=took,
                )
        return proto.UNARY[path].FromString(data)

    async def call(self, path: str, request: Any, *, read_only: bool) -> Any:
        """The response message of ``path``; raises an ``EtcdError``.  While no endpoint
        can take the call (a write: none could be connected to, so nothing was sent),
        it is tried again every RETRY_INTERVAL for up to ``retry_for`` seconds, as
        etcd's client retries until the request's context ends: the server's requests
        wait out an etcd restart, and its request timeouts end them first."""
        give_up = self.clock() + self.retry_for
        while True:
            detail = ""  # (one loop, not a coroutine per attempt: every call comes here)
            for index in self.rotation():
                try:
                    response = await self.unary(index, path, request)
                except ConnectError as e:
                    detail = f"failed to connect to {self.endpoints[index]}: {e}"
                    continue
                except CallFailed as e:
                    detail = e.detail
                    self._suspect(index, e.code)
                    if e.code == UNAVAILABLE and read_only:
                        continue
                    raise from_status(e.code, e.detail) from None
                self.current = index
                return response
            if self._closed or self.clock() >= give_up:
                raise Unavailable(f"no etcd endpoint answered: {detail}", UNAVAILABLE)
            await self._paused()

    def _paused(self) -> defer.Deferred[None]:
        """Fires at the next retry; every call waiting for etcd shares one timer, so their
        next attempts share one connection attempt per endpoint.  Cancelling a wait (the
        request timed out, its client went away) takes it off the list."""
        waiting = self._waiting
        if waiting is None:
            waiting = self._waiting = []
            self.reactor.callLater(RETRY_INTERVAL, self._retry)

        def cancelled(d: defer.Deferred[None]) -> None:
            if d in waiting:
                waiting.remove(d)

        resumed: defer.Deferred[None] = defer.Deferred(cancelled)
        waiting.append(resumed)
        return resumed

    def _retry(self) -> None:
        waiting, self._waiting = self._waiting or [], None
        for d in waiting:
            d.callback(None)

    def _suspect(self, index: int, code: int) -> None:
        """A call on ``index`` lost its connection or ran out of time: the next calls start
        at the next endpoint, and a silent connection is probed."""
        if code not in (UNAVAILABLE, DEADLINE_EXCEEDED):
            return  # etcd answered (a compaction, a size limit): the member is fine
        if self.current == index:
            self.current = (index + 1) % len(self.targets)
        channel = self._channels[index]
        if code == DEADLINE_EXCEEDED and channel is not None and channel.usable:
            channel.probe(PROBE_TIMEOUT)

    def call_blocking(self, path: str, request: Any) -> Any:
        """A unary call on a socket of its own, waited for: only at start, before the
        reactor runs. Tries every endpoint; raises Unavailable when none answers."""
        detail = ""
        for index in self.rotation():
            try:
                data = _blocking_call(self.targets[index], self.tls, path, request, self.timeout)
            except (OSError, CallFailed, ProtocolError) as e:
                detail = str(e)
                continue
            self.current = index
            return proto.UNARY[path].FromString(data)
        raise Unavailable(f"no etcd endpoint answered: {detail}", UNAVAILABLE)

    def close(self) -> None:
        self._closed = True
        self._deadlines.stop()
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
        code = UNAVAILABLE  # as gRPC counts a call whose connection failed
        try:
            data = _exchange(
                sock, GrpcConnection(target.authority, target.scheme), path, request, timeout
            )
            code = OK
            return data
        except CallFailed as e:
            code = e.code
            raise
        finally:
            grpcmetrics.unary(path, code)
    finally:
        sock.close()


def _exchange(
    sock: socket.socket, wire: GrpcConnection, path: str, request: Any, timeout: float
) -> bytes:
    """One unary call on a blocking socket: its response message, or CallFailed."""
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
