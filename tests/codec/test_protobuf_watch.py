"""Watch streams: length-prefixed WatchEvent frames, each holding a whole encoded object."""

from __future__ import annotations

import pytest

from platform_api.codec.protobuf import (
    PREFIX,
    FrameReader,
    ProtobufError,
    decode_watch_event,
    encode,
    encode_watch_event,
    read_frames,
)

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "resourceVersion": "9"}}
EXPIRED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "too old resource version: 1 (5)",
    "reason": "Expired",
    "code": 410,
}


def test_frame_layout() -> None:
    raw = encode(POD)
    frame = encode_watch_event("ADDED", raw)
    size = int.from_bytes(frame[:4], "big")
    assert size == len(frame) - 4
    # WatchEvent{type: "ADDED", object: RawExtension{raw: <the whole encoded object>}}
    ext = b"\x0a" + bytes([len(raw)]) + raw
    assert frame[4:] == b"\x0a\x05ADDED\x12" + bytes([len(ext)]) + ext
    assert raw.startswith(PREFIX)


def test_an_event_is_encoded_once_for_any_number_of_watchers() -> None:
    raw = encode(POD)
    assert encode_watch_event("MODIFIED", raw) == encode_watch_event("MODIFIED", POD)


def test_error_events_carry_a_status() -> None:
    (frame,) = read_frames(encode_watch_event("ERROR", EXPIRED))
    event_type, status = decode_watch_event(frame)
    assert event_type == "ERROR"
    assert status == {**EXPIRED, "metadata": {}}


def test_bookmarks() -> None:
    bookmark = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "resourceVersion": "12",
            "annotations": {"platform.io/initial-events-end": "true"},
        },
    }
    (frame,) = read_frames(encode_watch_event("BOOKMARK", bookmark))
    assert decode_watch_event(frame) == ("BOOKMARK", bookmark)


def test_frame_reader_reassembles_frames_split_anywhere() -> None:
    stream = b"".join(
        encode_watch_event(t, POD) for t in ("ADDED", "MODIFIED", "DELETED")
    ) + encode_watch_event("ERROR", EXPIRED)
    for step in (1, 3, 7, len(stream)):
        reader = FrameReader()
        frames = []
        for start in range(0, len(stream), step):
            frames += reader.feed(stream[start : start + step])
        assert reader.pending == 0
        assert [decode_watch_event(f)[0] for f in frames] == [
            "ADDED",
            "MODIFIED",
            "DELETED",
            "ERROR",
        ]


def test_cut_off_and_oversized_frames() -> None:
    frame = encode_watch_event("ADDED", POD)
    with pytest.raises(ProtobufError, match=r"^unexpected EOF$"):
        read_frames(frame[:-1])
    reader = FrameReader(max_frame=10)
    with pytest.raises(
        ProtobufError, match=r"^object to decode was longer than maximum allowed size$"
    ):
        reader.feed(frame)
    with pytest.raises(ProtobufError, match=r"^unexpected EOF$"):
        decode_watch_event(frame[4:-3])
