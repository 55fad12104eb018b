"""The transport's failure paths, against loopback servers that misbehave on purpose
(a real etcd answers every call; these never do): deadlines, dropped connections,
keepalive, members that take connections and answer nothing."""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from platform_api.storage.etcd import http2, proto
from platform_api.storage.etcd import transport as transport_module
from platform_api.storage.etcd.channel import KEEPALIVE, KEEPALIVE_TIMEOUT, GrpcChannel
from platform_api.storage.etcd.endpoint import Target
from platform_api.storage.etcd.errors import Unavailable
from platform_api.storage.etcd.grpcwire import UNAVAILABLE
from platform_api.storage.etcd.transport import Transport
from tests.storage.etcd_server import EtcdServer


class Silent(Protocol):
    """Takes the connection and every byte, answers nothing (a stopped member: the kernel
    accepts for it)."""

    received: list[bytes] = []

    def dataReceived(self, data: bytes) -> None:
        self.received.append(data)


class Greets(Protocol):
    """Greets the connection (its HTTP/2 SETTINGS), then answers nothing: a member that
    hung after the connection was made."""

    def connectionMade(self) -> None:
        self.transport.write(http2.settings({}))  # type: ignore[union-attr]


class HangsUp(Protocol):
    """Greets the connection, then closes it as soon as a call comes."""

    def connectionMade(self) -> None:
        self.transport.write(http2.settings({}))  # type: ignore[union-attr]

    def dataReceived(self, data: bytes) -> None:
        if b"etcdserverpb" in data:
            self.transport.loseConnection()  # type: ignore[union-attr]


def listen(protocol: type[Protocol]) -> tuple[str, object]:
    port = reactor.listenTCP(0, Factory.forProtocol(protocol), interface="127.0.0.1")  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{port.getHost().port}", port


@pytest_twisted.ensureDeferred
async def test_a_call_nobody_answers_ends_at_its_deadline() -> None:
    endpoint, port = listen(Greets)
    transport = Transport([endpoint], reactor, timeout=0.3)
    try:
        with pytest.raises(Unavailable) as caught:
            await transport.call(
                "/etcdserverpb.KV/Put", proto.PutRequest(key=b"k"), read_only=False
            )
        assert (caught.value.code, caught.value.message) == (4, "context deadline exceeded")
    finally:
        transport.close()
        await port.stopListening()  # type: ignore[attr-defined]


@pytest_twisted.ensureDeferred
async def test_a_dropped_connection_fails_a_write_and_a_read_moves_on() -> None:
    endpoint, port = listen(HangsUp)
    transport = Transport([endpoint], reactor, timeout=2.0)
    try:
        with pytest.raises(Unavailable) as write:
            await transport.call(
                "/etcdserverpb.KV/Put", proto.PutRequest(key=b"k"), read_only=False
            )
        assert write.value.code == UNAVAILABLE
        assert write.value.message.startswith("etcd connection lost")
        with pytest.raises(Unavailable) as read:
            await transport.call(
                "/etcdserverpb.KV/Range", proto.RangeRequest(key=b"k"), read_only=True
            )
        assert read.value.message.startswith("no etcd endpoint answered: etcd connection lost")
    finally:
        transport.close()
        await port.stopListening()  # type: ignore[attr-defined]


def test_blocking_call_reports_every_endpoint_down() -> None:
    transport = Transport(["http://127.0.0.1:1"], reactor, timeout=1.0)
    with pytest.raises(Unavailable) as caught:
        transport.call_blocking("/etcdserverpb.KV/Range", proto.RangeRequest(key=b"k"))
    assert caught.value.message.startswith("no etcd endpoint answered: ")


class Recorder:
    def __init__(self) -> None:
        self.ends: list[tuple[int, str]] = []

    def message(self, message: object) -> None:
        pass

    def ended(self, code: int, detail: str) -> None:
        self.ends.append((code, detail))


def watching() -> tuple[Clock, GrpcChannel, StringTransport, Recorder]:
    """A channel on a fake clock and connection, with a watch call open on it."""
    clock = Clock()
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), clock)
    wire = StringTransport()
    channel.makeConnection(wire)
    handler = Recorder()
    channel.open("/etcdserverpb.Watch/Watch", handler)
    return clock, channel, wire, handler


def test_a_peer_that_stops_answering_pings_is_dropped() -> None:
    clock, _, wire, handler = watching()
    clock.advance(KEEPALIVE)  # a ping goes out ...
    assert not handler.ends
    clock.advance(KEEPALIVE_TIMEOUT)  # ... and no PING ACK comes back
    assert handler.ends == [(UNAVAILABLE, "etcd did not answer a keepalive ping")]
    assert wire.disconnecting or getattr(wire, "disconnected", False)


def test_bytes_that_break_http2_end_every_call_and_the_connection() -> None:
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), Clock())
    wire = StringTransport()
    channel.makeConnection(wire)
    handler = Recorder()
    channel.open("/etcdserverpb.KV/Range", handler)
    channel.dataReceived(http2.frame(http2.PUSH_PROMISE, http2.END_HEADERS, 1, b"\0\0\0\2"))
    assert handler.ends == [
        (UNAVAILABLE, "etcd connection broken: PUSH_PROMISE after we disabled push")
    ]
    assert wire.disconnecting or wire.disconnected


def test_goaway_ends_the_calls_it_did_not_take_and_closes_after_the_rest() -> None:
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), Clock())
    wire = StringTransport()
    channel.makeConnection(wire)
    taken, untaken = Recorder(), Recorder()
    first = channel.open("/etcdserverpb.KV/Range", taken).stream_id
    channel.open("/etcdserverpb.KV/Range", untaken)
    channel.dataReceived(http2.frame(http2.GOAWAY, 0, 0, http2.GOAWAY_HEAD.pack(first, 0)))
    assert untaken.ends == [(UNAVAILABLE, "etcd went away")] and not taken.ends
    assert not channel.usable and not wire.disconnecting
    trailers = http2.literal(b"grpc-status", b"0")
    flags = http2.END_HEADERS | http2.END_STREAM
    channel.dataReceived(http2.frame(http2.HEADERS, flags, first, trailers))
    assert taken.ends == [(0, "")] and wire.disconnecting


def test_the_calls_of_one_turn_go_out_in_one_write_after_it() -> None:
    clock = Clock()
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), clock)
    wire = StringTransport()
    channel.makeConnection(wire)
    clock.advance(0)  # the connection preface
    writes: list[bytes] = []
    wire.write = writes.append  # type: ignore[method-assign]
    for _ in range(3):
        channel.open("/etcdserverpb.KV/Range", Recorder()).send(b"\0\0\0\0\0")
    assert writes == []
    clock.advance(0)
    assert len(writes) == 1 and writes[0].count(b"/etcdserverpb.KV/Range") == 3


def test_an_answer_that_owes_etcd_nothing_schedules_no_write() -> None:
    """Reading an answer queues nothing for etcd, so no flush is scheduled for it; a PING
    read is answered in the turn's one write."""
    clock = Clock()
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), clock)
    wire = StringTransport()
    channel.makeConnection(wire)
    clock.advance(0)  # the connection preface
    call = Recorder()
    stream = channel.open("/etcdserverpb.KV/Range", call)
    stream.send(b"", end=True)
    stream_id = stream.stream_id
    clock.advance(0)
    timers = len(clock.getDelayedCalls())  # the keepalive
    trailers = http2.literal(b"grpc-status", b"0")
    channel.dataReceived(
        http2.frame(http2.HEADERS, http2.END_HEADERS | http2.END_STREAM, stream_id, trailers)
    )
    assert call.ends == [(0, "")] and len(clock.getDelayedCalls()) == timers
    wire.clear()
    channel.dataReceived(http2.frame(http2.PING, 0, 0, b"12345678"))
    assert len(clock.getDelayedCalls()) == timers + 1
    clock.advance(0)
    assert wire.value() == http2.frame(http2.PING, http2.ACK, 0, b"12345678")


PUT = "/etcdserverpb.KV/Put"


@pytest_twisted.ensureDeferred
async def test_a_member_that_never_greets_gets_no_call_and_a_write_goes_on(
    etcd: EtcdServer,
) -> None:
    """Nothing is sent to a connection etcd has not greeted, so even a write may go on to
    the next member; the next calls start there."""
    Silent.received = []
    endpoint, port = listen(Silent)
    transport = Transport([endpoint, etcd.endpoint], reactor, timeout=0.5)
    try:
        request = proto.PutRequest(key=b"/transport/greeting", value=b"v")
        await transport.call(PUT, request, read_only=False)
        assert transport.current == 1
        assert b"KV/Put" not in b"".join(Silent.received)  # only the preface went there
    finally:
        transport.close()
        await port.stopListening()  # type: ignore[attr-defined]


@pytest_twisted.ensureDeferred
async def test_a_call_past_its_deadline_moves_the_next_on_and_probes_the_member(
    etcd: EtcdServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write that timed out is the caller's to judge (it may have happened); the next
    goes to the next member, and the silent connection is dropped after a probe."""
    monkeypatch.setattr(transport_module, "PROBE_TIMEOUT", 0.2)
    endpoint, port = listen(Greets)
    transport = Transport([endpoint, etcd.endpoint], reactor, timeout=0.5)
    try:
        request = proto.PutRequest(key=b"/transport/deadline", value=b"v")
        with pytest.raises(Unavailable) as caught:
            await transport.call(PUT, request, read_only=False)
        assert (caught.value.code, caught.value.message) == (4, "context deadline exceeded")
        assert transport.current == 1
        await transport.call(PUT, request, read_only=False)
        hung = transport._channels[0]
        assert hung is not None
        await task.deferLater(reactor, 0.4, lambda: None)
        assert hung.lost
    finally:
        transport.close()
        await port.stopListening()  # type: ignore[attr-defined]


def test_a_probe_drops_a_connection_that_does_not_answer_it_in_time() -> None:
    clock, channel, wire, handler = watching()
    clock.advance(KEEPALIVE)  # a keepalive ping is out, answered within KEEPALIVE_TIMEOUT ...
    channel.probe(2.0)  # ... or, probed, within 2 s
    clock.advance(1.9)
    assert not handler.ends
    clock.advance(0.1)
    assert handler.ends == [(UNAVAILABLE, "etcd did not answer a keepalive ping")]
    assert wire.disconnecting


def test_a_probe_answered_leaves_the_connection_and_keepalive_as_they_were() -> None:
    clock, channel, wire, handler = watching()
    channel.probe(2.0)
    channel.dataReceived(http2.frame(http2.PING, http2.ACK, 0, b"keepaliv"))
    clock.advance(KEEPALIVE - 0.1)
    assert not handler.ends and not wire.disconnecting
    clock.advance(0.1)  # the next keepalive ping ...
    clock.advance(KEEPALIVE_TIMEOUT)  # ... unanswered
    assert handler.ends == [(UNAVAILABLE, "etcd did not answer a keepalive ping")]


def test_a_channel_is_ready_when_etcd_greets_it_and_not_before() -> None:
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), Clock())
    channel.makeConnection(StringTransport())
    ready: list[object] = []
    channel.greeting.addCallback(ready.append)
    channel.dataReceived(http2.frame(http2.PING, 0, 0, b"12345678"))
    assert ready == []
    channel.dataReceived(http2.settings({}))
    assert ready == [channel]
