"""The frames between a server and its LMDB writer process (lmdb_writer.py).

A frame is a 4-byte big-endian length and a ``marshal`` payload of plain tuples: ops
one way, commit outcomes the other.  ``marshal`` is C-fast for the bytes, dicts and
numbers these carry, and loading it runs no code (unlike pickle).  Both ends are this
server's own processes on an inherited pipe; nothing else can write to it.

- ops: ``(seq, [(kind, key, object JSON, expected, cutoff), ...])``;
- outcome: ``(events, [(seq, results), ...], newest)``, every event of the receiver's
  writes committed since its last outcome, oldest first, then each frame's results in
  its ops' order, then the newest revision committed (the shared writer's news of the
  other workers' commits; 0 from a server's own writer).  A result is a Stored, a
  StorageError or an int (compaction and compactor ticks).  An outcome with no events
  and no results is news alone.
"""

from __future__ import annotations

import marshal
import struct
from typing import Any

import orjson

from platform_api.storage.interface import UNREACHABLE, Event, StorageError, Stored
from platform_api.storage.lmdb_commit import Op

HEADER = struct.Struct(">I")
_STORED, _ERROR, _NUMBER = 0, 1, 2
Reply = tuple[int, list[Any]]


def frame(payload: Any) -> bytes:
    body = marshal.dumps(payload)
    return HEADER.pack(len(body)) + body


class FrameReader:
    """Cuts a byte stream into decoded payloads."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._buffer
        buffer += data
        out = []
        start = 0
        while len(buffer) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer, start)
            end = start + HEADER.size + size
            if len(buffer) < end:
                break
            out.append(marshal.loads(buffer[start + HEADER.size : end]))
            start = end
        del buffer[:start]
        return out


def encode_ops(seq: int, ops: list[Op]) -> bytes:
    """Objects travel as their JSON: the writer stores what orjson makes of them, as the
    in-process writer does (a value JSON cannot carry fails the write before this)."""
    return frame((seq, [(op.kind, op.key, _json(op.obj), op.expected, op.cutoff) for op in ops]))


def decode_ops(payload: Any) -> tuple[int, list[Op]]:
    seq, ops = payload
    return seq, [
        Op(kind, key, None if raw is None else orjson.loads(raw), expected, cutoff)
        for kind, key, raw, expected, cutoff in ops
    ]


def _json(obj: dict[str, Any] | None) -> bytes | None:
    return None if obj is None else orjson.dumps(obj)


def _stored(stored: Stored | None) -> tuple[bytes, int, bytes] | None:
    return None if stored is None else (stored.key, stored.revision, stored.data)


def _unstored(raw: tuple[bytes, int, bytes] | None) -> Stored | None:
    return None if raw is None else Stored(*raw)


def _result(result: Any) -> tuple[Any, ...]:
    if isinstance(result, Stored):
        return (_STORED, result.key, result.revision, result.data)
    if isinstance(result, StorageError):
        return (_ERROR, result.code, result.key, str(result), result.revision)
    if isinstance(result, int):
        return (_NUMBER, result)
    return (_ERROR, UNREACHABLE, b"", f"storage write failed: {result!r}", 0)


def _unresult(raw: tuple[Any, ...]) -> Any:
    if raw[0] == _STORED:
        return Stored(raw[1], raw[2], raw[3])
    if raw[0] == _ERROR:
        return StorageError(raw[1], raw[2], raw[3], raw[4])
    return raw[1]


def encode_outcome(events: list[Event], replies: list[Reply], newest: int = 0) -> bytes:
    return frame(
        (
            [(e.type, e.revision, e.key, _stored(e.stored), _stored(e.prev)) for e in events],
            [(seq, [_result(r) for r in results]) for seq, results in replies],
            newest,
        )
    )


def decode_outcome(payload: Any) -> tuple[list[Event], list[Reply], int]:
    events, replies, newest = payload
    return (
        [Event(t, rev, key, _unstored(s), _unstored(p)) for t, rev, key, s, p in events],
        [(seq, [_unresult(r) for r in results]) for seq, results in replies],
        newest,
    )
