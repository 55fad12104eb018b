"""The frames between a server and its LMDB writer process."""

from __future__ import annotations

from platform_api.storage.interface import CONFLICT, DELETED, MODIFIED, Event, StorageError, Stored
from platform_api.storage.lmdb_commit import COMPACT, CREATE, UPDATE, Op
from platform_api.storage.lmdb_wire import (
    FrameReader,
    decode_ops,
    decode_outcome,
    encode_ops,
    encode_outcome,
)

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}}}


def test_ops_cross_whole_whatever_the_stream_cuts() -> None:
    ops = [
        Op(CREATE, b"/cm/a", CM),
        Op(UPDATE, b"/cm/b", {"n": 2**62, "f": 1.5, "t": True, "z": None, "l": [1], "s": "ü"}, 7),
        Op(COMPACT, b"", cutoff=12.25),
    ]
    wire = encode_ops(3, ops) + encode_ops(4, ops[:1])
    reader = FrameReader()
    frames = []
    for i in range(0, len(wire), 5):  # five bytes at a time
        frames += reader.feed(wire[i : i + 5])
    assert len(frames) == 2
    seq, back = decode_ops(frames[0])
    assert seq == 3
    assert [(o.kind, o.key, o.obj, o.expected, o.cutoff) for o in back] == [
        (o.kind, o.key, o.obj, o.expected, o.cutoff) for o in ops
    ]
    assert decode_ops(frames[1])[0] == 4


def test_outcomes_keep_every_kind_of_result() -> None:
    new = Stored(b"/cm/a", 9, b'{"v":2}')
    old = Stored(b"/cm/a", 8, b'{"v":1}')
    events = [Event(MODIFIED, 9, b"/cm/a", new, old), Event(DELETED, 10, b"/cm/b", old, old)]
    error = StorageError(CONFLICT, b"/cm/c", revision=4)
    results = [new, error, 17, None]  # None: a result the writer never set
    (payload,) = FrameReader().feed(encode_outcome(events, [(5, results)], 12))
    back_events, replies, newest = decode_outcome(payload)
    assert newest == 12
    assert [(e.type, e.revision, e.key) for e in back_events] == [
        (MODIFIED, 9, b"/cm/a"),
        (DELETED, 10, b"/cm/b"),
    ]
    assert back_events[0].stored is not None and back_events[0].stored.data == b'{"v":2}'
    assert back_events[0].prev is not None and back_events[0].prev.revision == 8
    [(seq, (stored, err, number, unset))] = replies
    assert seq == 5
    assert (stored.key, stored.revision, stored.data) == (b"/cm/a", 9, b'{"v":2}')
    assert (err.code, err.key, str(err), err.revision) == (
        CONFLICT,
        b"/cm/c",
        str(error),
        4,
    )
    assert number == 17
    assert isinstance(unset, StorageError) and unset.code == "Unreachable"
