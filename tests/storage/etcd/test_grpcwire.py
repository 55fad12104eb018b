"""grpcwire: gRPC on our HTTP/2 frames, against an in-memory server of another make (h2's)."""

from __future__ import annotations

import struct

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import pytest

from platform_api.storage.etcd import http2
from platform_api.storage.etcd.grpcwire import (
    CANCELLED,
    INTERNAL,
    OK,
    STREAM_WINDOW,
    UNAVAILABLE,
    UNKNOWN,
    Ended,
    Event,
    GoingAway,
    GrpcConnection,
    Message,
    PingAck,
)


def framed(message: bytes, compressed: int = 0) -> bytes:
    return struct.pack(">BI", compressed, len(message)) + message


class Peer:
    """The server end: records what the client sent, answers as told."""

    def __init__(self, client: GrpcConnection) -> None:
        self.client = client
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding=None)
        )
        self.h2.initiate_connection()
        self.received: dict[int, bytes] = {}
        self.headers: dict[int, dict[bytes, bytes]] = {}
        self.ended: set[int] = set()
        self.reset: dict[int, int] = {}
        self.events: list[Event] = []
        self.ack = True  # reopen the client's windows as its data is read
        self.pump()

    def pump(self) -> None:
        """Move bytes both ways until neither side has anything to say."""
        while True:
            out = self.client.data_to_send()
            if out:
                for event in self.h2.receive_data(out):
                    self._server_event(event)
            back = self.h2.data_to_send()
            if back:
                self.events += self.client.receive(back)
            if not out and not back:
                return

    def _server_event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            self.headers[event.stream_id] = dict(event.headers or [])  # type: ignore[index]
        elif isinstance(event, h2.events.DataReceived):
            sid = event.stream_id
            self.received[sid] = self.received.get(sid, b"") + (event.data or b"")  # type: ignore[index]
            if self.ack:
                self.h2.acknowledge_received_data(event.flow_controlled_length, sid)  # type: ignore[arg-type]
        elif isinstance(event, h2.events.StreamEnded):
            self.ended.add(event.stream_id)  # type: ignore[arg-type]
        elif isinstance(event, h2.events.StreamReset):
            self.reset[event.stream_id] = event.error_code  # type: ignore[index,assignment]

    def answer(self, sid: int, *messages: bytes, status: int = 0, message: str = "") -> None:
        self.h2.send_headers(sid, [(b":status", b"200"), (b"content-type", b"application/grpc")])
        for m in messages:
            self.h2.send_data(sid, framed(m))
        trailers = [(b"grpc-status", str(status).encode())]
        if message:
            trailers.append((b"grpc-message", message.encode()))
        self.h2.send_headers(sid, trailers, end_stream=True)
        self.pump()

    def of(self, sid: int) -> list[Message | Ended]:
        return [e for e in self.events if isinstance(e, (Message, Ended)) and e.stream_id == sid]


def connection() -> tuple[GrpcConnection, Peer]:
    client = GrpcConnection("127.0.0.1:2379", "http")
    return client, Peer(client)


def test_a_unary_call_sends_grpc_headers_and_one_framed_message() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.KV/Range", timeout=2.5)
    client.send(sid, b"request", end=True)
    peer.pump()
    assert peer.headers[sid][b":path"] == b"/etcdserverpb.KV/Range"
    assert peer.headers[sid][b"content-type"] == b"application/grpc"
    assert peer.headers[sid][b"te"] == b"trailers"
    assert peer.headers[sid][b"grpc-timeout"] == b"2500m"
    assert peer.received[sid] == framed(b"request") and sid in peer.ended
    peer.answer(sid, b"response")
    assert peer.of(sid) == [Message(sid, b"response"), Ended(sid, OK, "")]


def test_messages_split_across_frames_and_joined_in_one_are_each_delivered() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.Watch/Watch")
    client.send(sid, b"create")
    peer.pump()
    peer.h2.send_headers(sid, [(b":status", b"200")])
    whole = framed(b"one") + framed(b"two") + framed(b"three" * 10)
    peer.h2.send_data(sid, whole[:2])
    peer.pump()
    assert peer.of(sid) == []
    peer.h2.send_data(sid, whole[2:20])
    peer.h2.send_data(sid, whole[20:])
    peer.pump()
    assert peer.of(sid) == [
        Message(sid, b"one"),
        Message(sid, b"two"),
        Message(sid, b"three" * 10),
    ]


def test_a_trailers_only_error_carries_code_and_percent_decoded_message() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.KV/Txn")
    client.send(sid, b"x", end=True)
    peer.pump()
    peer.h2.send_headers(
        sid,
        [
            (b":status", b"200"),
            (b"grpc-status", b"11"),
            (b"grpc-message", b"etcdserver: mvcc: required revision is a future revision%21"),
        ],
        end_stream=True,
    )
    peer.pump()
    assert peer.of(sid) == [
        Ended(sid, 11, "etcdserver: mvcc: required revision is a future revision!")
    ]


def test_broken_answers_end_the_call_with_a_status() -> None:
    client, peer = connection()
    no_status, http_error, garbage, squeezed = (client.open("/p") for _ in range(4))
    peer.pump()
    peer.h2.send_headers(no_status, [(b":status", b"200")], end_stream=True)
    peer.h2.send_headers(http_error, [(b":status", b"503")], end_stream=True)
    peer.h2.send_headers(garbage, [(b":status", b"200"), (b"grpc-status", b"ok")], end_stream=True)
    peer.h2.send_headers(squeezed, [(b":status", b"200")])
    peer.h2.send_data(squeezed, framed(b"zipped", compressed=1))
    peer.pump()
    assert peer.of(no_status) == [Ended(no_status, INTERNAL, "the response has no grpc-status")]
    assert peer.of(http_error) == [Ended(http_error, UNAVAILABLE, "unexpected HTTP status 503")]
    assert peer.of(garbage) == [Ended(garbage, UNKNOWN, "malformed grpc-status b'ok'")]
    assert peer.of(squeezed) == [Ended(squeezed, INTERNAL, "compressed message not asked for")]
    assert peer.reset[squeezed] == h2.errors.ErrorCodes.CANCEL


def test_reset_streams_map_as_grpc_go_maps_them() -> None:
    client, peer = connection()
    refused, cancelled = client.open("/a"), client.open("/b")
    peer.pump()
    peer.h2.reset_stream(refused, h2.errors.ErrorCodes.REFUSED_STREAM)
    peer.h2.reset_stream(cancelled, h2.errors.ErrorCodes.CANCEL)
    peer.pump()
    assert [e.code for e in peer.of(refused)] == [UNAVAILABLE]  # type: ignore[union-attr]
    assert [e.code for e in peer.of(cancelled)] == [CANCELLED]  # type: ignore[union-attr]


def test_cancel_resets_the_stream_and_later_sends_are_dropped() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.Watch/Watch")
    client.send(sid, b"create")
    peer.pump()
    client.cancel(sid)
    client.send(sid, b"progress")  # the call is over: nothing goes out
    peer.pump()
    assert peer.reset[sid] == h2.errors.ErrorCodes.CANCEL
    assert peer.received[sid] == framed(b"create")


def test_a_request_larger_than_the_peers_window_goes_as_the_window_opens() -> None:
    client, peer = connection()
    big = b"v" * 200_000  # the server's initial window is 65,535 bytes
    sid = client.open("/etcdserverpb.KV/Put")
    client.send(sid, big, end=True)
    peer.pump()  # the peer acknowledges as it reads: WINDOW_UPDATEs let the rest through
    assert peer.received[sid] == framed(big) and sid in peer.ended


def test_a_response_larger_than_our_stream_window_arrives_whole() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.KV/Range")
    client.send(sid, b"all", end=True)
    peer.pump()
    big = b"k" * (STREAM_WINDOW + 100_000)
    peer.h2.send_headers(sid, [(b":status", b"200")])
    sent = framed(big)
    while sent:  # as a server does: only what the window allows, then wait for updates
        room = min(peer.h2.local_flow_control_window(sid), peer.h2.max_outbound_frame_size)
        assert room > 0, "the client stopped reopening its window"
        peer.h2.send_data(sid, sent[:room])
        sent = sent[room:]
        peer.pump()
    peer.h2.send_headers(sid, [(b"grpc-status", b"0")], end_stream=True)
    peer.pump()
    assert peer.of(sid) == [Message(sid, big), Ended(sid, OK, "")]


def test_a_paused_stream_holds_the_sender_until_resumed() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.Watch/Watch")
    client.send(sid, b"create")
    peer.pump()
    peer.h2.send_headers(sid, [(b":status", b"200")])
    client.pause(sid)
    chunk = framed(b"e" * (16384 - 5))  # one message per frame of the largest size
    sent = 0
    while peer.h2.local_flow_control_window(sid) >= len(chunk):
        peer.h2.send_data(sid, chunk)
        sent += 1
        peer.pump()
    assert sent == STREAM_WINDOW // len(chunk)  # then the window stays shut
    client.resume(sid)
    peer.pump()
    assert peer.h2.local_flow_control_window(sid) == STREAM_WINDOW
    assert len(peer.of(sid)) == sent


def test_goaway_is_reported_and_marks_the_connection() -> None:
    client, peer = connection()
    client.open("/a")
    peer.pump()
    peer.h2.close_connection(last_stream_id=1)
    peer.pump()
    assert client.going_away
    assert GoingAway(1, 0) in peer.events


def test_a_call_answered_before_its_request_was_read_ends_once_with_the_answer() -> None:
    """As etcd answers a request over its size limit: a window update for what it did read,
    trailers and RST_STREAM, all at once; the rest of the request is dropped."""
    client, peer = connection()
    peer.ack = False
    sid = client.open("/etcdserverpb.KV/Put")
    client.send(sid, b"v" * 200_000, end=True)
    peer.pump()
    peer.h2.increment_flow_control_window(65535, stream_id=sid)
    peer.h2.increment_flow_control_window(65535)
    peer.h2.send_headers(
        sid,
        [(b":status", b"200"), (b"grpc-status", b"8"), (b"grpc-message", b"too large")],
        end_stream=True,
    )
    peer.h2.reset_stream(sid, h2.errors.ErrorCodes.NO_ERROR)
    peer.pump()
    assert peer.of(sid) == [Ended(sid, 8, "too large")]
    assert len(peer.received[sid]) < 200_000


def test_small_answers_cost_no_window_updates() -> None:
    """Windows reopen once half is used: a unary call's answer sends nothing back."""
    client, peer = connection()
    for _ in range(50):
        sid = client.open("/etcdserverpb.KV/Range")
        client.send(sid, b"key", end=True)
        peer.pump()
        peer.h2.send_headers(sid, [(b":status", b"200")])
        peer.h2.send_data(sid, framed(b"value" * 200))
        peer.h2.send_headers(sid, [(b"grpc-status", b"0")], end_stream=True)
        assert peer.client.receive(peer.h2.data_to_send())[0] == Message(sid, b"value" * 200)
        assert client.data_to_send() == b""


def test_pings_both_ways() -> None:
    client, peer = connection()
    client.ping(b"keepaliv")
    peer.pump()
    assert PingAck(b"keepaliv") in peer.events
    peer.h2.ping(b"fromserv")
    peer.pump()  # the client answers the server's ping by itself
    assert peer.h2.data_to_send() == b""


def test_header_blocks_decode_right_as_the_peers_table_changes() -> None:
    """Indexed-only blocks are kept decoded; a block that changes the table drops them,
    since the same bytes then name other fields."""
    client, peer = connection()
    said = ["first", "first", "second", "first", "third", "second", "first"]
    for text in said:
        sid = client.open("/etcdserverpb.KV/Range")
        client.send(sid, b"k", end=True)
        peer.pump()
        peer.answer(sid, b"v", status=2, message=text)
        assert peer.of(sid)[-1] == Ended(sid, 2, text)


def test_padding_priority_and_continuation_frames_are_read() -> None:
    client, peer = connection()
    sid = client.open("/etcdserverpb.KV/Range")
    client.send(sid, b"k", end=True)
    peer.pump()
    peer.h2.send_headers(sid, [(b":status", b"200")])
    peer.h2.send_data(sid, framed(b"padded"), pad_length=20)
    long_message = "m" * 40_000  # over one frame: HEADERS, then CONTINUATIONs
    peer.h2.send_headers(
        sid, [(b"grpc-status", b"3"), (b"grpc-message", long_message.encode())], end_stream=True
    )
    peer.pump()
    assert peer.of(sid) == [Message(sid, b"padded"), Ended(sid, 3, long_message)]


def test_headers_with_padding_and_priority_are_read() -> None:
    client, _ = connection()
    sid = client.open("/etcdserverpb.KV/Range")
    status = b"\x88"  # :status 200, from the static table
    head = b"\x03" + b"\x00\x00\x00\x00\x10" + status + b"\x00" * 3  # pad 3, priority
    trailers = http2.literal(b"grpc-status", b"0")
    got = client.receive(
        http2.frame(
            http2.HEADERS, http2.END_HEADERS | http2.PADDED | http2.PRIORITY_FLAG, sid, head
        )
        + http2.frame(http2.DATA, 0, sid, framed(b"answer"))
        + http2.frame(http2.HEADERS, http2.END_HEADERS | http2.END_STREAM, sid, trailers)
    )
    assert got == [Message(sid, b"answer"), Ended(sid, OK, "")]


def test_a_smaller_initial_window_from_the_peer_holds_what_is_sent() -> None:
    client, peer = connection()
    peer.ack = False
    peer.h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000})
    peer.pump()
    sid = client.open("/etcdserverpb.KV/Put")
    client.send(sid, b"v" * 5000, end=True)
    peer.pump()
    assert len(peer.received[sid]) == 1000 and sid not in peer.ended
    peer.h2.increment_flow_control_window(10_000, stream_id=sid)
    peer.pump()
    assert peer.received[sid] == framed(b"v" * 5000) and sid in peer.ended


@pytest.mark.parametrize(
    "frame",
    [
        http2.frame(http2.DATA, 0, 1, b"x" * 20_000),  # over the frame size we allow
        http2.frame(http2.PUSH_PROMISE, http2.END_HEADERS, 1, b"\x00\x00\x00\x02"),
        http2.frame(http2.DATA, http2.PADDED, 1, b"\x09abc"),  # padding past the end
        http2.frame(http2.HEADERS, http2.END_HEADERS, 1, b"\xff\xff\xff\xff\x0f"),  # no such index
        http2.frame(http2.HEADERS, 0, 1, b"\x88") + http2.frame(http2.DATA, 0, 1, b""),
        http2.frame(http2.CONTINUATION, http2.END_HEADERS, 1, b"\x88"),
        http2.frame(http2.SETTINGS, 0, 0, b"\x00\x04\x00"),
        http2.frame(http2.GOAWAY, 0, 0, b"\x00"),
    ],
    ids=[
        "oversize",
        "push",
        "padding",
        "hpack",
        "interrupted",
        "continuation",
        "settings",
        "goaway",
    ],
)
def test_protocol_violations_raise(frame: bytes) -> None:
    client, peer = connection()
    client.open("/etcdserverpb.KV/Range")
    peer.pump()
    with pytest.raises(http2.ProtocolError):
        client.receive(frame)


def test_unknown_and_priority_frames_are_ignored() -> None:
    client, _ = connection()
    assert client.receive(http2.frame(0x42, 0, 0, b"??") + http2.frame(2, 0, 1, b"\0" * 5)) == []


def test_running_out_of_stream_ids_marks_the_connection() -> None:
    client, _ = connection()
    client._next_stream = http2.LAST_STREAM_ID - 2
    assert client.open("/a") == http2.LAST_STREAM_ID - 2 and not client.going_away
    assert client.open("/b") == http2.LAST_STREAM_ID and client.going_away
