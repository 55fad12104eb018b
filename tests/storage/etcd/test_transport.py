"""The transport's failure paths, against loopback servers that misbehave on purpose
(a real etcd answers every call; these never do): deadlines, dropped connections,
keepalive."""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from platform_api.storage.etcd import http2, proto
from platform_api.storage.etcd.channel import KEEPALIVE, KEEPALIVE_TIMEOUT, GrpcChannel, Target
from platform_api.storage.etcd.errors import Unavailable
from platform_api.storage.etcd.grpcwire import UNAVAILABLE
from platform_api.storage.etcd.transport import Transport


class Silent(Protocol):
    """Takes the connection and every byte, answers nothing."""


class HangsUp(Protocol):
    """Closes the connection as soon as the client speaks."""

    def dataReceived(self, data: bytes) -> None:
        self.transport.loseConnection()  # type: ignore[union-attr]


def listen(protocol: type[Protocol]) -> tuple[str, object]:
    port = reactor.listenTCP(0, Factory.forProtocol(protocol), interface="127.0.0.1")  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{port.getHost().port}", port


@pytest_twisted.ensureDeferred
async def test_a_call_nobody_answers_ends_at_its_deadline() -> None:
    endpoint, port = listen(Silent)
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


def test_a_peer_that_stops_answering_pings_is_dropped() -> None:
    clock = Clock()
    channel = GrpcChannel(Target.parse("127.0.0.1:2379"), clock)
    wire = StringTransport()
    channel.makeConnection(wire)
    handler = Recorder()
    channel.open("/etcdserverpb.Watch/Watch", handler)
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
