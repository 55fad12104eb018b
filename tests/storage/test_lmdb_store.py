"""LMDBStorage: revisions, compare-and-swap, group commit, the change log and its window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import Deferred, ensureDeferred, maybeDeferred

from platform_api.storage.interface import (
    ADDED,
    CONFLICT,
    DELETED,
    EXPIRED,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    MODIFIED,
    ListOptions,
    Preconditions,
    StorageError,
)
from platform_api.storage.lmdb_commit import UPDATE, Op
from platform_api.storage.lmdb_store import LMDBStorage, open_environment


class ManualWriter:
    """Runs writer-thread work only when told to (failures included): lets a test see
    batching and ordering."""

    def __init__(self) -> None:
        self.queued: list[tuple[Callable[[], Any], Deferred[Any]]] = []

    def __call__(self, work: Callable[[], Any]) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        self.queued.append((work, d))
        return d

    def run_all(self) -> None:
        while self.queued:
            work, d = self.queued.pop(0)
            maybeDeferred(work).chainDeferred(d)  # failures too, as the thread pool does


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


@pytest.fixture
def env_path(tmp_path: Path) -> Iterator[str]:
    yield str(tmp_path / "db")


def make(
    path: str, clock: Callable[[], float] | None = None
) -> tuple[LMDBStorage, ManualWriter, list[Any]]:
    writer = ManualWriter()
    events: list[Any] = []
    kwargs = {"clock": clock} if clock else {}
    storage = LMDBStorage(open_environment(path, 64 * 2**20), writer, events.extend, **kwargs)
    return storage, writer, events


def result(d: Deferred[Any]) -> Any:
    """The result of an already-fired Deferred, raising its failure."""
    out: list[Any] = []
    failures: list[Any] = []
    d.addCallbacks(out.append, failures.append)
    if failures:
        failures[0].raiseException()
    assert out, "not finished"
    return out[0]


def test_create_assigns_increasing_revisions_in_one_batch(env_path: str) -> None:
    storage, writer, events = make(env_path)
    first = storage.create(b"/cm/a", cm("a"))
    second = storage.create(b"/cm/b", cm("b"))
    assert len(writer.queued) == 1  # one batch in flight; the second write joins it
    writer.run_all()
    a, b = result(first), result(second)
    assert (a.revision, b.revision) == (1, 2)
    assert a.object["metadata"]["resourceVersion"] == "1"
    assert storage.get(b"/cm/b").data == b.data
    assert [(e.type, e.revision) for e in events] == [(ADDED, 1), (ADDED, 2)]


def test_writes_queued_until_the_lock_is_held_share_its_transaction(env_path: str) -> None:
    """The writer takes the queue once it holds LMDB's write lock: writes that arrived
    while it waited (a sibling worker committing) go in the same transaction."""
    writer = ManualWriter()
    commits: list[list[Any]] = []
    storage = LMDBStorage(open_environment(env_path, 64 * 2**20), writer, commits.append)
    made = [storage.create(f"/cm/{n}".encode(), cm(n)) for n in "abc"]
    assert len(writer.queued) == 1
    writer.run_all()
    assert [[e.revision for e in batch] for batch in commits] == [[1, 2, 3]]
    assert [result(d).revision for d in made] == [1, 2, 3]
    storage.create(b"/cm/d", cm("d"))  # the writer is idle again: a new transaction
    writer.run_all()
    assert [[e.revision for e in batch] for batch in commits] == [[1, 2, 3], [4]]


def test_create_existing_key_fails(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    d = storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    with pytest.raises(StorageError) as caught:
        result(d)
    assert caught.value.code == KEY_EXISTS
    assert storage.current_revision() == 1  # a failed write takes no revision


def test_guaranteed_update_retries_on_conflict_without_losing_writes(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/n", cm("n", count="0"))
    writer.run_all()

    def increment(obj: dict[str, Any] | None, _stored: Any) -> dict[str, Any]:
        assert obj is not None
        obj["data"]["count"] = str(int(obj["data"]["count"]) + 1)
        return obj

    pending = [ensureDeferred(storage.guaranteed_update(b"/cm/n", increment)) for _ in range(5)]
    for _ in range(10):
        writer.run_all()
    for d in pending:
        result(d)
    assert storage.get(b"/cm/n").object["data"]["count"] == "5"


def test_no_op_update_is_not_written(env_path: str) -> None:
    storage, writer, events = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    d = ensureDeferred(storage.guaranteed_update(b"/cm/a", lambda obj, _s: obj))
    assert not writer.queued
    assert result(d).revision == 1 and len(events) == 1


def test_preconditions_and_missing_keys(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    with pytest.raises(StorageError) as caught:
        result(ensureDeferred(storage.delete(b"/cm/a", preconditions=Preconditions(uid="other"))))
    assert "Precondition failed: UID in precondition: other" in str(caught.value)
    with pytest.raises(StorageError) as caught:
        result(ensureDeferred(storage.guaranteed_update(b"/cm/zz", lambda o, s: o)))
    assert caught.value.code == KEY_NOT_FOUND


def test_delete_logs_previous_state(env_path: str) -> None:
    storage, writer, events = make(env_path)
    storage.create(b"/cm/a", cm("a", x="1"))
    writer.run_all()
    d = ensureDeferred(storage.delete(b"/cm/a"))
    writer.run_all()
    gone = result(d)
    assert gone.object["data"] == {"x": "1"} and gone.revision == 2
    assert gone.object["metadata"]["resourceVersion"] == "2"
    assert events[-1].type == DELETED and events[-1].revision == 2
    with pytest.raises(StorageError):
        storage.get(b"/cm/a")
    logged = storage.events_since(0)
    assert [(e.type, e.revision) for e in logged] == [(ADDED, 1), (DELETED, 2)]
    assert logged[1].prev is not None and logged[1].prev.object["data"] == {"x": "1"}


def test_list_chunks_and_remaining_count(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    for name in ("a", "b", "c", "d", "e"):
        storage.create(b"/cm/" + name.encode(), cm(name))
    storage.create(b"/other/x", cm("x"))
    writer.run_all()
    page = storage.get_list(b"/cm/", ListOptions(limit=2))
    assert [s.key for s in page.items] == [b"/cm/a", b"/cm/b"]
    assert page.continue_key == b"/cm/b" and page.remaining == 3 and page.revision == 6
    page = storage.get_list(b"/cm/", ListOptions(limit=2, start_after=b"/cm/b"))
    assert [s.key for s in page.items] == [b"/cm/c", b"/cm/d"] and page.remaining == 1
    page = storage.get_list(b"/cm/", ListOptions(limit=2, start_after=b"/cm/d"))
    assert [s.key for s in page.items] == [b"/cm/e"] and page.continue_key is None


def test_list_at_an_older_revision_uses_the_change_log(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/a", cm("a", v="1"))
    storage.create(b"/cm/b", cm("b"))
    writer.run_all()
    ensureDeferred(storage.guaranteed_update(b"/cm/a", lambda o, s: {**o, "data": {"v": "2"}}))
    writer.run_all()
    ensureDeferred(storage.delete(b"/cm/b"))
    storage.create(b"/cm/c", cm("c"))
    writer.run_all()
    at2 = storage.get_list(b"/cm/", ListOptions(revision=2))
    assert at2.revision == 2
    assert [(s.key, s.object["data"]) for s in at2.items] == [
        (b"/cm/a", {"v": "1"}),
        (b"/cm/b", {}),
    ]
    newest = storage.get_list(b"/cm/", ListOptions())
    assert [s.key for s in newest.items] == [b"/cm/a", b"/cm/c"]


def test_compaction_drops_old_history(env_path: str) -> None:
    now = [1000.0]
    storage, writer, _ = make(env_path, clock=lambda: now[0])
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    now[0] += 400
    storage.create(b"/cm/b", cm("b"))
    writer.run_all()
    d = storage.compact(300)
    writer.run_all()
    assert result(d) == 1
    assert storage.compacted_revision() == 1
    with pytest.raises(StorageError) as caught:
        storage.events_since(0)
    assert caught.value.code == EXPIRED
    assert [e.revision for e in storage.events_since(1)] == [2]
    assert (
        storage.get_list(b"/cm/", ListOptions(revision=1)).revision == 1
    )  # 1 is still rebuildable


def test_compaction_of_the_whole_log(env_path: str) -> None:
    now = [1000.0]
    storage, writer, _ = make(env_path, clock=lambda: now[0])
    for name in ("a", "b"):
        storage.create(b"/cm/" + name.encode(), cm(name))
    writer.run_all()
    now[0] += 400
    d = storage.compact(300)
    late = storage.create(b"/cm/c", cm("c"))  # a write in the same batch must not suffer
    writer.run_all()
    assert result(d) == 2 and result(late).revision == 3
    assert [e.revision for e in storage.events_since(2)] == [3]


def test_compaction_marks_expire_lists_within_two_ticks_of_an_idle_store(env_path: str) -> None:
    """kube's compactor: each tick bumps the revision and compacts to the previous tick's,
    so a continue token at an idle store's revision runs out all the same."""
    storage, writer, events = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    first = storage.mark_compaction()
    writer.run_all()
    assert (result(first), storage.current_revision(), storage.compacted_revision()) == (0, 2, 0)
    assert storage.get_list(b"/cm/", ListOptions(revision=1)).revision == 1
    second = storage.mark_compaction()
    writer.run_all()
    assert (result(second), storage.current_revision(), storage.compacted_revision()) == (2, 3, 2)
    with pytest.raises(StorageError) as caught:
        storage.get_list(b"/cm/", ListOptions(revision=1))
    assert caught.value.code == EXPIRED
    assert [e.revision for e in storage.events_since(0)] == [1]  # watches keep the log
    assert len(events) == 1  # no event for the marks
    assert storage.create(b"/cm/b", cm("b")) is not None
    writer.run_all()
    assert storage.get(b"/cm/b").revision == 4


def test_data_survives_reopen(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    storage._env.close()
    again, _, _ = make(env_path)
    assert again.get(b"/cm/a").object["metadata"]["name"] == "a"
    assert again.current_revision() == 1


def test_two_writers_share_one_revision_sequence(env_path: str) -> None:
    """Two storages, each with its own writer, on one database (as two processes are).

    py-lmdb opens an environment once per process; tests/e2e runs two real processes.
    """
    one, w1, _ = make(env_path)
    w2 = ManualWriter()
    two = LMDBStorage(one._env, w2)
    one.create(b"/cm/a", cm("a"))
    two.create(b"/cm/b", cm("b"))
    w2.run_all()
    w1.run_all()
    assert one.get(b"/cm/b").revision == 1
    assert two.get(b"/cm/a").revision == 2
    assert [e.revision for e in one.events_since(0)] == [1, 2]


def test_conflict_code_is_reported_for_stale_writes(env_path: str) -> None:
    storage, writer, _ = make(env_path)
    storage.create(b"/cm/a", cm("a"))
    writer.run_all()
    stale = storage.get(b"/cm/a")
    ensureDeferred(storage.guaranteed_update(b"/cm/a", lambda o, s: {**o, "data": {"x": "1"}}))
    writer.run_all()
    d = storage._submit(Op(UPDATE, b"/cm/a", cm("a"), stale.revision))
    writer.run_all()
    with pytest.raises(StorageError) as caught:
        result(d)
    assert caught.value.code == CONFLICT


def test_events_modified_carry_previous_object(env_path: str) -> None:
    storage, writer, events = make(env_path)
    storage.create(b"/cm/a", cm("a", v="1"))
    writer.run_all()
    ensureDeferred(storage.guaranteed_update(b"/cm/a", lambda o, s: {**o, "data": {"v": "2"}}))
    writer.run_all()
    assert events[-1].type == MODIFIED
    assert events[-1].prev.object["data"] == {"v": "1"}
    assert events[-1].stored.object["data"] == {"v": "2"}
