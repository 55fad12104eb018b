"""The LMDB writer process: commits one server's writes outside its interpreter.

py-lmdb releases the GIL around every LMDB call, so a writer *thread* and the reactor
hand the GIL back and forth a dozen times per commit: each hand-off is a futex wake and
a context switch, and under load a commit waited longer for the GIL than for its fsync
(measured in the issue 13 notes: 0.16 ms of reactor CPU per create went there).  In a
process of its own the writer holds its interpreter alone and the reactor never waits.

The server (lmdb_process.py) spawns ``python -m platform_api.storage.lmdb_writer``
with the environment's path and map sizes, writes op frames to its stdin and reads
outcome frames from its stdout (lmdb_wire.py); log lines go to stderr.  Each turn takes
every frame that has arrived, commits them in one transaction (group commit, with the
store's own recovery: map growth, remaps, one transaction per op when a batch fails),
and answers.  End of input (the server stopped or died) ends the process.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.logger import globalLogBeginner, textFileLogObserver
from twisted.python.failure import Failure

from platform_api.storage.interface import UNREACHABLE, Event, StorageError
from platform_api.storage.lmdb_commit import Op
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.lmdb_wire import (
    FrameReader,
    Reply,
    decode_ops,
    encode_outcome,
)

_CHUNK = 1 << 20


def _run_inline(work: Any) -> Deferred[Any]:
    """Commit on this thread: the process has nothing else to do meanwhile."""
    return maybeDeferred(work)


def read_available(fd: int, reader: FrameReader) -> list[Any] | None:
    """Block for input, then take what else is there; None at end of input."""
    data = os.read(fd, _CHUNK)
    if not data:
        return None
    frames = reader.feed(data)
    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, _CHUNK)
        if not data:
            break  # answered first; the next read ends the loop
        frames += reader.feed(data)
    return frames


def commit_frames(storage: LMDBStorage, frames: list[Any]) -> list[Reply]:
    """Each frame's results, its ops committed with every other frame's.  A result
    left unset (none is) goes out as an error (lmdb_wire)."""
    replies: list[Reply] = []
    ops: list[Op] = []
    slots: list[tuple[list[Any], int]] = []
    for payload in frames:
        seq, batch = decode_ops(payload)
        results: list[Any] = [None] * len(batch)
        replies.append((seq, results))
        ops += batch
        slots += [(results, i) for i in range(len(batch))]
    for d, op, (results, i) in zip(storage.submit_all(ops), ops, slots, strict=True):
        d.addBoth(_store, results, i, op.key)
    return replies


def _store(result: Any, results: list[Any], i: int, key: bytes) -> None:
    if isinstance(result, Failure):
        error = result.value
        if not isinstance(error, StorageError):
            error = StorageError(UNREACHABLE, key, f"storage write failed: {error}")
        result = error
    results[i] = result


def serve(storage: LMDBStorage, read_fd: int, write_fd: int) -> None:
    reader = FrameReader()
    events: list[Event] = []
    storage.on_commit = events.extend
    while (frames := read_available(read_fd, reader)) is not None:
        replies = commit_frames(storage, frames)
        out = encode_outcome(events, replies)
        events.clear()
        view = memoryview(out)
        while view:
            view = view[os.write(write_fd, view) :]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="platform_api.storage.lmdb_writer")
    parser.add_argument("path")
    parser.add_argument("--map-size", type=int, required=True)
    parser.add_argument("--map-ceiling", type=int, required=True)
    args = parser.parse_args(argv)
    # Ctrl-C reaches the whole process group, and a service manager's stop signal the
    # whole cgroup: the server, still draining, ends this process itself (EOF).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stderr)], redirectStandardIO=False)
    env = open_environment(args.path, args.map_size)
    storage = LMDBStorage(env, _run_inline, map_ceiling=args.map_ceiling)
    try:
        serve(storage, sys.stdin.fileno(), sys.stdout.fileno())
    finally:
        env.close()


if __name__ == "__main__":
    main()
