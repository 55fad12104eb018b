"""One HTTP/2 connection to an etcd member as a Twisted protocol: every gRPC call a stream
on it (grpcwire.py speaks the protocol), its messages and its end handed to the call's
handler on the reactor.  The connection is ready once etcd has greeted it (its HTTP/2
SETTINGS), as gRPC counts one ready.  Keepalive pings find a peer that went silent, and a
probe (a ping with a short deadline) finds one sooner when a call on it ran out of time; a
lost connection ends every call on it with UNAVAILABLE.
"""

from __future__ import annotations

from typing import Any, Protocol

from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectError
from twisted.internet.protocol import Protocol as TwistedProtocol
from twisted.python.failure import Failure

from platform_api.eager import send_eagerly, write_now
from platform_api.storage.etcd import grpcmetrics
from platform_api.storage.etcd.endpoint import Target
from platform_api.storage.etcd.grpcwire import (
    CANCELLED,
    UNAVAILABLE,
    Ended,
    GoingAway,
    GrpcConnection,
    Message,
    PingAck,
)

KEEPALIVE, KEEPALIVE_TIMEOUT = 30.0, 10.0  # seconds, as the grpcio client had them


class CallHandler(Protocol):
    """Where a stream's messages and its end go."""

    def message(self, message: Message) -> None: ...

    def ended(self, code: int, detail: str) -> None: ...


class Stream:
    """One call's stream: send messages on it, pause and resume what it reads, cancel it."""

    def __init__(self, connection: GrpcChannel, stream_id: int, labels: grpcmetrics.Call) -> None:
        self.connection, self.stream_id, self.labels = connection, stream_id, labels

    def send(self, message: bytes, *, end: bool = False) -> None:
        self.connection.wire.send(self.stream_id, message, end=end)
        self.connection.flush()
        grpcmetrics.sent(self.labels)

    def pause(self) -> None:
        self.connection.wire.pause(self.stream_id)

    def resume(self) -> None:
        self.connection.wire.resume(self.stream_id)
        self.connection.flush()

    def cancel(self, code: int = CANCELLED) -> None:
        """End the call from this side; ``code``, the status it counts as having ended with."""
        self.connection.forget(self.stream_id, code)


class GrpcChannel(TwistedProtocol):
    """One HTTP/2 connection to an etcd member; ``open`` starts a call on it."""

    def __init__(self, target: Target, reactor: Any) -> None:
        self.wire = GrpcConnection(target.authority, target.scheme)
        self.reactor = reactor
        self.calls: dict[int, CallHandler] = {}
        self.labels: dict[int, grpcmetrics.Call] = {}  # each open call's, for its metrics
        self.lost = False
        self._keepalive: Any = None
        self._ping_deadline: Any = None
        self._flush_call: Any = None
        # Fires with this channel when etcd's SETTINGS arrive; fails if the connection ends first.
        self.greeting: Deferred[GrpcChannel] = Deferred()

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
            if transport is not self.transport:  # TLS records sent as written, too
                send_eagerly(transport)
        self.flush()
        self._keepalive = self.reactor.callLater(KEEPALIVE, self._ping)

    def open(self, path: str, handler: CallHandler, timeout: float | None = None) -> Stream:
        stream_id = self.wire.open(path, timeout)
        self.calls[stream_id] = handler
        labels = self.labels[stream_id] = grpcmetrics.call(path)
        return Stream(self, stream_id, labels)

    def forget(self, stream_id: int, code: int = CANCELLED) -> None:
        """Cancel a call: RST_STREAM, and no end is reported for it."""
        if self.calls.pop(stream_id, None) is not None:
            grpcmetrics.handled(self.labels.pop(stream_id), code)
            if not self.lost:
                self.wire.cancel(stream_id)
                self.flush()

    def _ended(self, stream_id: int, code: int, detail: str) -> None:
        """Report a call's end to its handler (once: it is forgotten)."""
        handler = self.calls.pop(stream_id, None)
        if handler is not None:
            grpcmetrics.handled(self.labels.pop(stream_id), code)
            handler.ended(code, detail)

    def flush(self) -> None:
        """Send what the calls queued, once this reactor turn is over: the calls a turn
        makes go out as one write, straight to the socket (platform_api/eager.py) rather
        than a turn later after two ``epoll_ctl`` calls."""
        if self._flush_call is None and not self.lost:
            self._flush_call = self.reactor.callLater(0, self._send)

    def _send(self) -> None:
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()  # called straight, not as the turn's flush
        self._flush_call = None
        data = self.wire.data_to_send()
        if data and not self.lost:
            write_now(self.transport, data)

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
                    grpcmetrics.received(self.labels[event.stream_id])
                    handler.message(event)
            elif isinstance(event, Ended):
                self._ended(event.stream_id, event.code, event.message)
            elif isinstance(event, PingAck):
                self._pong()
            elif isinstance(event, GoingAway):
                # Streams it did not take may go elsewhere.
                for stream_id in [s for s in self.calls if s > event.last_stream_id]:
                    self._ended(stream_id, UNAVAILABLE, "etcd went away")
        if self.wire.greeted and not self.greeting.called:
            self.greeting.callback(self)
        if self.wire.going_away and not self.calls:
            self._send()  # what the wire owes the peer, before the close
            self.transport.loseConnection()  # type: ignore[union-attr]
        elif self.wire.pending:  # a PING's ACK, a WINDOW_UPDATE, a SETTINGS ACK
            self.flush()

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        self.lost = True
        for timer in (self._keepalive, self._ping_deadline, self._flush_call):
            if timer is not None and timer.active():
                timer.cancel()
        self._end_all(f"etcd connection lost: {reason.getErrorMessage()}")
        if not self.greeting.called:
            self.greeting.errback(ConnectError(string="etcd closed the connection unanswered"))

    def _end_all(self, detail: str) -> None:
        self.lost = True
        for stream_id in list(self.calls):
            self._ended(stream_id, UNAVAILABLE, detail)

    def probe(self, timeout: float) -> None:
        """Ping now; no answer within ``timeout`` drops the connection (as a keepalive
        ping unanswered does).  A call that outlived its deadline here makes the peer
        suspect: a stopped or cut-off member holds its connection open, and keepalive
        alone would take up to KEEPALIVE + KEEPALIVE_TIMEOUT to notice."""
        if self.lost:
            return
        pending = self._ping_deadline
        if pending is not None and pending.active():
            if pending.getTime() - self.reactor.seconds() <= timeout:
                return  # the ping out already ends sooner
            pending.cancel()
        if self._keepalive is not None and self._keepalive.active():
            self._keepalive.cancel()
        self._ping(timeout)

    def _ping(self, timeout: float = KEEPALIVE_TIMEOUT) -> None:
        self.wire.ping(b"keepaliv")
        self.flush()
        self._ping_deadline = self.reactor.callLater(timeout, self._silent)

    def _pong(self) -> None:
        if self._ping_deadline is not None and self._ping_deadline.active():
            self._ping_deadline.cancel()
            self._keepalive = self.reactor.callLater(KEEPALIVE, self._ping)

    def _silent(self) -> None:
        self._end_all("etcd did not answer a keepalive ping")
        self.transport.abortConnection()  # type: ignore[union-attr]
