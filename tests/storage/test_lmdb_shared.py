"""One LMDB writer for several workers, for real: the supervisor's writer process
(sharedwriter.py) on its Unix socket, and two workers' stores connected to it.

The storage contract suite runs over such a connection too (test_storage_contract.py,
``lmdb-shared``); these are what only sharing can do.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import lmdb
import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults
from twisted.internet.task import deferLater

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.sharedwriter import SharedWriter
from platform_api.storage import lmdb_serve
from platform_api.storage.interface import ADDED, UNREACHABLE, Event, StorageError, Stored
from platform_api.storage.lmdb_commit import CREATE, Op
from platform_api.storage.lmdb_connection import WriterConnection
from platform_api.storage.lmdb_serve import GREETING, accept, listen
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.lmdb_wire import FrameReader, decode_outcome, encode_ops
from tests.polling import process_ended, until

MI = 2**20


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


class Worker:
    """What a worker holds: a store on the environment (LMDB opens an environment once
    per process: these two share it), its connection to the writer, its events."""

    def __init__(self, env: lmdb.Environment, socket_path: str) -> None:
        self.events: list[Event] = []
        self.writer = WriterConnection(reactor, socket_path)
        self.storage = LMDBStorage(env, None, self.events.extend, writer=self.writer)


class World:
    def __init__(self, data_dir: Path) -> None:
        (data_dir / "run").mkdir(mode=0o700)
        self.data_dir = data_dir
        self.supervisor = SharedWriter(reactor, ServerConfig(data_dir=str(data_dir)))
        self.supervisor.start()
        self.env = open_environment(str(data_dir / "db"), 64 * MI)
        self.workers = [Worker(self.env, self.supervisor.socket) for _ in range(2)]

    def pid(self) -> int:
        assert self.supervisor.transport is not None
        return int(self.supervisor.transport.pid)

    def transactions(self) -> int:
        return int(self.env.info()["last_txnid"])


@pytest_twisted.async_yield_fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    made = World(tmp_path)
    await until(lambda: all(w.writer.running for w in made.workers))
    yield made
    for worker in made.workers:
        await worker.writer.stop()
    await made.supervisor.stop()
    made.env.close()


@pytest_twisted.ensureDeferred
async def test_two_workers_writes_share_transactions_and_each_hears_its_own(
    world: World,
) -> None:
    first, second = (w.storage for w in world.workers)
    before = world.transactions()
    done = await gatherResults(
        [first.create(b"/cm/a%d" % i, cm(f"a{i}")) for i in range(5)]
        + [second.create(b"/cm/b%d" % i, cm(f"b{i}")) for i in range(5)]
    )
    # Both workers' frames were in the writer's hands at once: one transaction, or two
    # when the second frame came in while the first committed.
    assert world.transactions() - before in (1, 2)
    revisions = sorted(s.revision for s in done)
    assert revisions == list(range(revisions[0], revisions[0] + 10))
    mine = [[(e.type, e.key) for e in w.events] for w in world.workers]
    assert mine == [
        [(ADDED, b"/cm/a%d" % i) for i in range(5)],
        [(ADDED, b"/cm/b%d" % i) for i in range(5)],
    ]
    assert first.get(b"/cm/b4").revision == second.get(b"/cm/b4").revision


@pytest_twisted.ensureDeferred
async def test_a_killed_writer_is_replaced_and_each_worker_answers_what_it_lost(
    world: World,
) -> None:
    first, second = (w.storage for w in world.workers)
    await first.create(b"/cm/before", cm("before"))
    pid = world.pid()
    os.kill(pid, signal.SIGSTOP)  # it takes no more input ...
    lost = [first.create(b"/cm/lost1", cm("lost1")), second.create(b"/cm/lost2", cm("lost2"))]
    await deferLater(reactor, 0.05, lambda: None)
    os.kill(pid, signal.SIGKILL)  # ... and dies with both workers' writes sent
    for write in lost:
        with pytest.raises(StorageError) as caught:
            await write
        assert caught.value.code == UNREACHABLE
        assert str(caught.value).startswith("the LMDB writer went away (")
        assert str(caught.value).endswith("; the write's outcome is unknown")
    # Sent while the supervisor starts another: they wait for it, and land.
    after = await gatherResults(
        [first.create(b"/cm/after1", cm("after1")), second.create(b"/cm/after2", cm("after2"))]
    )
    assert world.pid() != pid
    assert [s.revision for s in after] == [
        first.get(b"/cm/after1").revision,
        second.get(b"/cm/after2").revision,
    ]


@pytest_twisted.ensureDeferred
async def test_a_worker_that_goes_away_leaves_the_writer_to_the_others(world: World) -> None:
    gone, staying = world.workers
    await gone.storage.create(b"/cm/a", cm("a"))
    await gone.writer.stop()
    assert (await staying.storage.create(b"/cm/b", cm("b"))).revision > 0
    assert staying.storage.get(b"/cm/a").object["metadata"]["name"] == "a"


@pytest_twisted.ensureDeferred
async def test_a_worker_that_stops_sending_after_its_last_write_is_answered(
    world: World,
) -> None:
    """Its end half-closed: the writer commits and answers the write, forgets the
    connection, and goes on for the others."""
    pid = world.pid()
    with socket.socket(socket.AF_UNIX) as leaving:
        leaving.connect("\0" + world.supervisor.socket)
        leaving.settimeout(5)
        assert leaving.recv(1) == GREETING
        os.kill(pid, signal.SIGSTOP)  # the frame and the end of input in one read
        leaving.sendall(encode_ops(1, [Op(CREATE, b"/cm/last", cm("last"))]))
        leaving.shutdown(socket.SHUT_WR)
        os.kill(pid, signal.SIGCONT)
        received = b""
        while chunk := leaving.recv(65536):
            received += chunk
    outcomes = [decode_outcome(payload) for payload in FrameReader().feed(received)]
    answered = [results for _, replies, _ in outcomes for _, results in replies]
    assert [[r.key for r in results] for results in answered] == [[b"/cm/last"]]
    created = await world.workers[0].storage.create(b"/cm/next", cm("next"))
    assert created.revision == answered[0][0].revision + 1
    assert world.pid() == pid


def test_the_writer_takes_connections_of_the_server_user_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any local process can reach an abstract socket; the frames are ``marshal``, so a
    process of another user is hung up on before any is read."""
    listener = listen(f"platform-test-{os.getpid()}-{id(monkeypatch)}")
    readers: lmdb_serve.Workers = {}
    with socket.socket(socket.AF_UNIX) as ours:
        ours.connect(listener.getsockname())
        accept(listener, readers)
        assert len(readers) == 1
    monkeypatch.setattr(os, "getuid", lambda: os.geteuid() + 1)  # now the peer is not us
    with socket.socket(socket.AF_UNIX) as stranger:
        stranger.connect(listener.getsockname())
        accept(listener, readers)
        assert len(readers) == 1
        stranger.settimeout(5)
        assert stranger.recv(1) == b""  # closed on it
    for conn in readers:
        conn.close()
    listener.close()


@pytest_twisted.ensureDeferred
async def test_stopping_the_supervisors_writer_ends_it(world: World) -> None:
    await world.workers[0].storage.create(b"/cm/a", cm("a"))
    pid = world.pid()
    for worker in world.workers:
        await worker.writer.stop()
    await world.supervisor.stop()
    await until(lambda: process_ended(pid))
    with pytest.raises(ConnectionRefusedError), socket.socket(socket.AF_UNIX) as probe:
        probe.connect("\0" + world.supervisor.socket)


@pytest_twisted.ensureDeferred
async def test_a_write_waits_for_a_writer_that_says_hello(tmp_path: Path) -> None:
    """A writer killed a moment ago still completes connections into its backlog; a
    write sent into one would be lost.  Until the writer greets it, a link carries none."""
    name = f"platform-test-{os.getpid()}-hello"
    silent = listen(name)  # takes connections into its backlog, and never accepts them
    env = open_environment(str(tmp_path / "db"), 64 * MI)
    writer = WriterConnection(reactor, name)
    storage = LMDBStorage(env, None, writer=writer)
    try:
        write = storage.create(b"/cm/a", cm("a"))
        await deferLater(reactor, 0.2, lambda: None)
        assert not write.called and not writer.running
        silent.close()  # it dies: the connection ends, and the write is still to send
        await deferLater(reactor, 0.1, lambda: None)
        assert not write.called
        (tmp_path / "run").mkdir(mode=0o700)
        supervisor = SharedWriter(reactor, ServerConfig(data_dir=str(tmp_path)), name)
        supervisor.start()
        try:
            assert (await write).revision == storage.get(b"/cm/a").revision
        finally:
            await writer.stop()
            await supervisor.stop()
    finally:
        env.close()


@pytest_twisted.ensureDeferred
async def test_a_connection_that_sends_what_no_worker_sends_is_closed_alone(
    world: World,
) -> None:
    pid = world.pid()
    with socket.socket(socket.AF_UNIX) as stranger:
        stranger.connect("\0" + world.supervisor.socket)
        stranger.settimeout(5)
        assert stranger.recv(1) == GREETING
        stranger.sendall(b"\x00\x00\x00\x03\xff\xfe\xfd")  # a frame, not marshal
        await deferLater(reactor, 0.1, lambda: None)
        while stranger.recv(65536):  # (news of commits, sent to every connection)
            pass  # hung up on: the reads end
    created = await world.workers[0].storage.create(b"/cm/a", cm("a"))
    assert world.workers[1].storage.get(b"/cm/a").revision == created.revision
    assert world.pid() == pid  # the writer went on


def test_a_worker_that_reads_no_answers_is_dropped_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writer answers every worker in turn: one that stopped reading (a stopped
    process) would hold every other worker's writes, so it is dropped after a while."""
    monkeypatch.setattr(lmdb_serve, "SEND_TIMEOUT", 0.2)
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    readers = {ours: lmdb_serve._Worker()}
    big = Stored(b"/cm/big", 7, b"x" * (4 * MI))  # more than the socket holds unread
    frames: list[tuple[socket.socket, tuple[int, list[Op]]]] = [(ours, (1, []))]
    lmdb_serve._answer(frames, [(1, [big])], [], readers, 7)
    assert readers == {}
    assert ours.fileno() == -1  # closed
    theirs.close()


@pytest_twisted.ensureDeferred
async def test_a_worker_that_writes_nothing_hears_of_the_others_commits(world: World) -> None:
    """The writer tells each worker the newest revision with its answers, and alone to
    one with no answers coming: it then reads the change log (its watchers wait on it)."""
    writing, idle = world.workers
    heard: list[int] = []
    idle.writer.on_news = lambda: heard.append(idle.storage.current_revision())
    created = await writing.storage.create(b"/cm/a", cm("a"))
    await until(lambda: heard)
    assert heard == [created.revision]
    assert idle.events == []  # news, not events: those are read from the change log


@pytest_twisted.ensureDeferred
async def test_news_that_an_answer_carries_is_not_sent_again(world: World) -> None:
    first, second = world.workers
    news: list[str] = []
    first.writer.on_news = lambda: news.append("first")
    second.writer.on_news = lambda: news.append("second")
    await first.storage.create(b"/cm/a", cm("a"))
    await until(lambda: news == ["second"])
    await second.storage.create(b"/cm/b", cm("b"))  # its answer: nothing newer than its own
    await until(lambda: news == ["second", "first"])
    await deferLater(reactor, 5 * lmdb_serve.NEWS_GAP, lambda: None)
    assert news == ["second", "first"]


def test_news_alone_waits_out_the_gap_since_a_worker_last_heard() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        worker = lmdb_serve._Worker()
        workers = {ours: worker}
        assert lmdb_serve._news_due(workers, 0) is None  # nothing to tell
        lmdb_serve._tell(workers, 5)
        assert worker.told == 5
        assert lmdb_serve._news_due(workers, 5) is None
        lmdb_serve._tell(workers, 6)  # told a moment ago: not yet
        assert worker.told == 5
        due = lmdb_serve._news_due(workers, 6)
        assert due is not None and 0 < due <= lmdb_serve.NEWS_GAP
        worker.told_at -= lmdb_serve.NEWS_GAP
        assert lmdb_serve._news_due(workers, 6) == 0.0
        lmdb_serve._tell(workers, 6)
        assert worker.told == 6
        theirs.settimeout(5)
        sent = FrameReader().feed(theirs.recv(65536))
        assert sent == [([], [], 5), ([], [], 6)]
