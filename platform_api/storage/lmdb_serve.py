"""How the LMDB writer process serves (lmdb_writer.py is its entry point).

Each turn takes every frame that has arrived, commits all their ops in one transaction
(group commit, with the store's own recovery: map growth, remaps, one transaction per op
when a batch fails), and answers each frame's sender with its results and the events of
its own writes.  ``serve`` answers one server on its pipes.  ``serve_shared`` answers
the workers of a ``--workers`` supervisor on a Unix socket: with a writer each, two
workers' writers took turns at LMDB's write lock (in 8000 creates each waited ~0.55 s
for it, and one or the other held it ~75% of the run: a writer preempted mid-commit
holds it longer); one writer commits both workers' writes together, with no lock to
wait for.  It also tells each worker of the others' commits (NEWS_GAP), which a worker
reads from the change log.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.logger import Logger
from twisted.python.failure import Failure

from platform_api.storage.interface import UNREACHABLE, Event, StorageError, Stored
from platform_api.storage.lmdb_commit import Op
from platform_api.storage.lmdb_store import LMDBStorage
from platform_api.storage.lmdb_wire import (
    FrameReader,
    Reply,
    decode_ops,
    encode_outcome,
)

log = Logger()
_CHUNK = 1 << 20


def run_inline(work: Any) -> Deferred[Any]:
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


def commit_frames(storage: LMDBStorage, frames: list[tuple[int, list[Op]]]) -> list[Reply]:
    """Each frame's results, its ops committed with every other frame's.  A result
    left unset (none is) goes out as an error (lmdb_wire)."""
    replies: list[Reply] = []
    ops: list[Op] = []
    slots: list[tuple[list[Any], int]] = []
    for seq, batch in frames:
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
        replies = commit_frames(storage, [decode_ops(payload) for payload in frames])
        out = encode_outcome(events, replies)
        events.clear()
        view = memoryview(out)
        while view:
            view = view[os.write(write_fd, view) :]


# -- the shared writer ---------------------------------------------------------------------

_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid
SEND_TIMEOUT = 5.0  # seconds a worker may leave an answer unread
GREETING = b"\x01"  # this writer is alive and has taken the connection (lmdb_connection.py)
# A worker hears of the others' commits at most this long after the first it has not
# heard of: with its own answers (each says the newest revision), or in an outcome of
# its own (news alone).  Under load every worker has answers coming: no news goes out
# alone, and no worker is woken for it.
NEWS_GAP = 0.002


class _Worker:
    """A connected worker: its frames as they arrive, and what it has heard."""

    def __init__(self) -> None:
        self.reader = FrameReader()
        self.told = 0  # the newest revision it has been sent
        self.told_at = float("-inf")  # when (monotonic)


Workers = dict[socket.socket, _Worker]


def listen(name: str) -> socket.socket:
    """The workers' socket: ``name`` in the abstract namespace (Linux).  Any local process
    can reach such a socket, so ``accept`` takes only the server user's: the frames are
    ``marshal``, for this server's own processes alone."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind("\0" + name)
    sock.listen(64)
    return sock


def serve_shared(storage: LMDBStorage, listener: socket.socket, control_fd: int) -> None:
    """Commit what the connected workers send until ``control_fd`` (the supervisor's
    pipe) ends."""
    workers: Workers = {}
    events: list[Event] = []
    storage.on_commit = events.extend
    newest = storage.current_revision()
    while True:
        watched: list[Any] = [control_fd, listener, *workers]
        ready = select.select(watched, [], [], _news_due(workers, newest))[0]
        if control_fd in ready and not os.read(control_fd, _CHUNK):
            break
        if listener in ready:
            accept(listener, workers)
        talking = [conn for conn in ready if conn in workers]
        frames = [(conn, payload) for conn in talking for payload in _receive(conn, workers)]
        if frames:
            replies = commit_frames(storage, [payload for _, payload in frames])
            newest = storage.current_revision()
            _answer(frames, replies, events, workers, newest)
            events.clear()
        _tell(workers, newest)
        for conn in talking:
            if conn not in workers:  # it closed its end: answered what it sent, now closed
                conn.close()
    for conn in workers:
        conn.close()
    listener.close()


def accept(listener: socket.socket, workers: Workers) -> None:
    """Take a worker's connection and greet it; another user's, or one that is gone
    before it is greeted, is closed."""
    try:
        conn, _ = listener.accept()
    except OSError:  # it left the backlog before this turn took it
        return
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size)
        if _PEER.unpack(creds)[1] != os.getuid():
            raise PermissionError("another user's process")
        conn.sendall(GREETING)
    except OSError:
        conn.close()
        return
    conn.setblocking(False)
    workers[conn] = _Worker()


def _receive(conn: socket.socket, workers: Workers) -> list[tuple[int, list[Op]]]:
    """The frames a worker sent, decoded; a worker that went away is forgotten, and so
    is a connection that sends what no worker sends (the other workers' writes go on)."""
    frames: list[tuple[int, list[Op]]] = []
    while True:
        try:
            data = conn.recv(_CHUNK)
        except BlockingIOError:
            return frames
        except OSError:
            data = b""
        if not data:
            del workers[conn]
            return frames
        try:
            frames += [decode_ops(payload) for payload in workers[conn].reader.feed(data)]
        except Exception as e:
            log.error("an unreadable frame from a worker; closing its connection: {e!r}", e=e)
            del workers[conn]
            return []


def _answer(
    frames: list[tuple[socket.socket, tuple[int, list[Op]]]],
    replies: list[Reply],
    events: list[Event],
    workers: Workers,
    newest: int,
) -> None:
    """Each worker its frames' results and its own writes' events, in commit order."""
    owners: dict[int, socket.socket] = {}
    answers: dict[socket.socket, list[Reply]] = {}
    for (conn, _), reply in zip(frames, replies, strict=True):
        answers.setdefault(conn, []).append(reply)
        for result in reply[1]:
            if isinstance(result, Stored):  # a write's own revision: its event's
                owners[result.revision] = conn
    for conn, its_replies in answers.items():
        mine = [e for e in events if owners.get(e.revision) is conn]
        _send(conn, encode_outcome(mine, its_replies, newest), workers, newest)


def _tell(workers: Workers, newest: int) -> None:
    """News alone to each worker that has not heard of ``newest`` and has heard nothing
    for NEWS_GAP."""
    now = time.monotonic()
    for conn, worker in list(workers.items()):
        if worker.told < newest and now - worker.told_at >= NEWS_GAP:
            _send(conn, encode_outcome([], [], newest), workers, newest)


def _news_due(workers: Workers, newest: int) -> float | None:
    """Seconds until some worker is due news (None: every worker has heard)."""
    due = [w.told_at + NEWS_GAP for w in workers.values() if w.told < newest]
    return max(0.0, min(due) - time.monotonic()) if due else None


def _send(conn: socket.socket, data: bytes, workers: Workers, newest: int) -> None:
    """An outcome to a worker.  A connection that takes none for SEND_TIMEOUT (its
    process stopped reading) is dropped, rather than stall every worker's writes."""
    try:
        conn.settimeout(SEND_TIMEOUT)
        conn.sendall(data)
        conn.setblocking(False)
    except OSError:  # gone, or not reading
        workers.pop(conn, None)
        conn.close()
        return
    worker = workers.get(conn)
    if worker is not None:  # (one that sent its last frames and its end answered here)
        worker.told, worker.told_at = newest, time.monotonic()
