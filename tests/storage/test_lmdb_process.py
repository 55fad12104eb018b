"""The LMDB writer process, for real: a child process commits, the reactor never waits.

The storage contract suite runs over it too (test_storage_contract.py, ``lmdb-process``);
these are what only a separate process can do: lose its answer and be replaced.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults, maybeDeferred
from twisted.internet.task import deferLater

from platform_api.storage.interface import ADDED, KEY_EXISTS, UNREACHABLE, Event, StorageError
from platform_api.storage.lmdb_commit import CREATE, Op
from platform_api.storage.lmdb_process import WriterProcess
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.polling import process_ended, until

MI = 2**20


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


class World:
    def __init__(self, path: str) -> None:
        self.env = open_environment(path, 64 * MI)
        self.events: list[Event] = []
        self.writer = WriterProcess(reactor, path, 64 * MI, 64 * MI)
        self.storage = LMDBStorage(self.env, None, self.events.extend, writer=self.writer)

    def pid(self) -> int:
        assert self.writer.transport is not None
        return int(self.writer.transport.pid)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(str(tmp_path / "db"))
    yield made
    made.writer.stop()
    made.env.close()


@pytest_twisted.ensureDeferred
async def test_the_writes_of_one_turn_go_out_together(world: World) -> None:
    first = world.storage.current_revision()
    done = await gatherResults([world.storage.create(b"/cm/%d" % i, cm(str(i))) for i in range(5)])
    assert [s.revision for s in done] == list(range(first + 1, first + 6))
    assert world.writer._seq == 1  # one frame: the writer commits them in one transaction
    assert [(e.type, e.revision) for e in world.events] == [(ADDED, s.revision) for s in done]
    assert done[0].object["metadata"]["resourceVersion"] == str(first + 1)
    assert world.storage.get(b"/cm/4").revision == first + 5


@pytest_twisted.ensureDeferred
async def test_a_refused_write_comes_back_as_its_storage_error(world: World) -> None:
    await world.storage.create(b"/cm/a", cm("a"))
    with pytest.raises(StorageError) as caught:
        await world.storage.create(b"/cm/a", cm("a"))
    assert caught.value.code == KEY_EXISTS
    updated = await world.storage.guaranteed_update(
        b"/cm/a", lambda obj, stored: {**obj, "data": {"k": "v"}}
    )
    assert updated.object["data"] == {"k": "v"}


@pytest_twisted.ensureDeferred
async def test_a_killed_writer_answers_its_writes_and_is_replaced(world: World) -> None:
    await world.storage.create(b"/cm/before", cm("before"))
    pid = world.pid()
    os.kill(pid, signal.SIGSTOP)  # it takes no more input ...
    lost = world.storage.create(b"/cm/lost", cm("lost"))
    await deferLater(reactor, 0.05, lambda: None)
    os.kill(pid, signal.SIGKILL)  # ... and dies with the write sent
    with pytest.raises(StorageError) as caught:
        await lost
    assert caught.value.code == UNREACHABLE
    assert str(caught.value).startswith("the LMDB writer process exited (")
    assert str(caught.value).endswith("; the write's outcome is unknown")
    after = await world.storage.create(b"/cm/after", cm("after"))  # waits for the new one
    assert world.pid() != pid
    assert world.storage.get(b"/cm/after").revision == after.revision
    with pytest.raises(StorageError):
        world.storage.get(b"/cm/lost")  # never read: never committed


@pytest_twisted.ensureDeferred
async def test_a_write_sent_to_a_writer_already_dead_waits_for_the_next(world: World) -> None:
    """Killed before the reactor has heard of it: the write finds the pipe broken, so
    the dead process read none of it, and it goes to the new process instead of failing."""
    await world.storage.create(b"/cm/before", cm("before"))
    pid = world.pid()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while (
        not process_ended(pid) and time.monotonic() < deadline
    ):  # the reactor is not run meanwhile
        time.sleep(0.005)
    created = await world.storage.create(b"/cm/after", cm("after"))
    assert world.pid() != pid
    assert world.storage.get(b"/cm/after").revision == created.revision


@pytest_twisted.ensureDeferred
async def test_commits_whose_outcome_was_lost_still_reach_watchers(world: World) -> None:
    """The change log has every commit: what the dead process could not report is read
    back from it (here another process's commit stands in for one)."""
    await world.storage.create(b"/cm/a", cm("a"))
    other = LMDBStorage(world.env, maybeDeferred)  # shares the environment
    written = await other.create(b"/cm/b", cm("b"))
    pid = world.pid()
    os.kill(pid, signal.SIGSTOP)
    lost = world.storage.create(b"/cm/c", cm("c"))
    await deferLater(reactor, 0.05, lambda: None)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(StorageError):
        await lost
    assert [(e.key, e.revision) for e in world.events][-1] == (b"/cm/b", written.revision)


@pytest_twisted.ensureDeferred
async def test_the_writer_outlives_stop_signals_sent_to_the_group(world: World) -> None:
    """A service manager signals every process of the service; the server drains and
    ends its writer itself, so the writer must not go first."""
    await world.storage.create(b"/cm/a", cm("a"))
    pid = world.pid()
    os.kill(pid, signal.SIGTERM)
    os.kill(pid, signal.SIGINT)
    await deferLater(reactor, 0.1, lambda: None)
    await world.storage.create(b"/cm/b", cm("b"))
    assert world.pid() == pid


@pytest_twisted.ensureDeferred
async def test_stopping_ends_the_process(world: World) -> None:
    await world.storage.create(b"/cm/a", cm("a"))
    pid = world.pid()
    ended: Deferred[None] = world.writer.stop()
    await ended
    await until(lambda: process_ended(pid))


@pytest_twisted.ensureDeferred
async def test_a_value_no_frame_carries_fails_its_writes_only(world: World) -> None:
    """The size check refuses such a value first; the frame does not hang if one
    comes past it."""
    odd = Op(CREATE, b"/cm/odd", {**cm("odd"), "data": {"k": object()}})
    odd.deferred = Deferred()
    world.writer.submit([odd])
    with pytest.raises(StorageError) as caught:
        await odd.deferred
    assert caught.value.code == UNREACHABLE
    assert str(caught.value) == "storage write failed: Type is not JSON serializable: object"
    assert (await world.storage.create(b"/cm/fine", cm("fine"))).revision > 0


@pytest_twisted.ensureDeferred
async def test_an_unreadable_answer_ends_the_writer_and_its_writes_are_answered(
    world: World,
) -> None:
    await world.storage.create(b"/cm/a", cm("a"))
    pid = world.pid()
    os.kill(pid, signal.SIGSTOP)
    held = world.storage.create(b"/cm/held", cm("held"))
    await deferLater(reactor, 0.05, lambda: None)
    world.writer.childDataReceived(1, b"\x00\x00\x00\x02\xff\xff")  # not marshal
    with pytest.raises(StorageError) as caught:
        await held
    assert caught.value.code == UNREACHABLE
    assert str(caught.value) == (
        "the LMDB writer process exited (A process has ended with a probable error "
        "condition: process ended by signal 9.); the write's outcome is unknown"
    )
    assert (await world.storage.create(b"/cm/b", cm("b"))).revision > 0
    assert world.pid() != pid
