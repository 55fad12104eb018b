"""A stateful property test of the LMDB storage against a model: any sequence of creates,
updates (with and without preconditions), no-op updates, deletes and compaction ticks
keeps one global revision that grows by one a write, reads and lists (at the newest
revision, at an older one, in pages) that are the model's state at that revision, and a
change log that replays every write in order with its previous object."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from twisted.internet.defer import Deferred, ensureDeferred, maybeDeferred

from platform_api.storage.interface import (
    ADDED,
    DELETED,
    EXPIRED,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    MODIFIED,
    ListOptions,
    Preconditions,
    StorageError,
)
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

Obj = dict[str, Any]
PREFIX = b"/registry/configmaps/ns/"
KEYS = st.sampled_from([PREFIX + name for name in (b"a", b"b", b"c", b"d")])
VALUES = st.sampled_from(["x", "y", "z"])


def _result(deferred: Any) -> Any:
    """What a write's Deferred (or coroutine) has fired with: writes commit inline here."""
    if not isinstance(deferred, Deferred):
        deferred = ensureDeferred(deferred)  # an async def's coroutine
    out: list[Any] = []
    deferred.addBoth(out.append)
    assert out, "the write did not commit inline"
    if isinstance(out[0], Exception) or hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return out[0]


def _error(deferred: Any) -> str:
    try:
        _result(deferred)
    except StorageError as e:
        return e.code
    raise AssertionError("succeeded")


def _obj(key: bytes, value: str) -> Obj:
    name = key.rsplit(b"/", 1)[1].decode()
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": value},
    }


class StorageModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.env = open_environment(self.tmp.name, 2**24)
        self.storage = LMDBStorage(self.env, maybeDeferred)
        self.start = self.storage.current_revision()
        self.revision = self.start
        self.state: dict[bytes, tuple[str, int]] = {}  # key -> (value, mod revision)
        self.history: list[tuple[int, dict[bytes, tuple[str, int]]]] = [(self.start, {})]
        self.log: list[tuple[str, bytes, str | None, str | None]] = []  # type, key, new, prev

    def teardown(self) -> None:
        self.env.close()
        self.tmp.cleanup()

    def _wrote(self, kind: str, key: bytes, new: str | None, prev: str | None) -> None:
        self.revision += 1
        if new is None:
            self.state.pop(key)
        else:
            self.state[key] = (new, self.revision)
        self.history.append((self.revision, dict(self.state)))
        self.log.append((kind, key, new, prev))

    @rule(key=KEYS, value=VALUES)
    def create(self, key: bytes, value: str) -> None:
        deferred = self.storage.create(key, _obj(key, value))
        if key in self.state:
            assert _error(deferred) == KEY_EXISTS
            return
        stored = _result(deferred)
        self._wrote(ADDED, key, value, None)
        assert stored.revision == self.revision

    @rule(key=KEYS, value=VALUES, stale=st.booleans())
    def update(self, key: bytes, value: str, stale: bool) -> None:
        def change(obj: Obj | None, _stored: Any) -> Obj:
            assert obj is not None
            obj["data"] = {"v": value}
            return obj

        current = self.state.get(key)
        if stale and current is not None:  # a uid precondition that no longer holds
            pre = Preconditions(uid="not-the-uid")
            assert _error(self.storage.guaranteed_update(key, change, preconditions=pre))
            return
        deferred = self.storage.guaranteed_update(key, change)
        if current is None:
            assert _error(deferred) == KEY_NOT_FOUND
            return
        stored = _result(deferred)
        if current[0] == value:  # nothing changed: nothing written
            assert stored.revision == current[1]
            return
        self._wrote(MODIFIED, key, value, current[0])
        assert stored.revision == self.revision

    @rule(key=KEYS)
    def delete(self, key: bytes) -> None:
        deferred = self.storage.delete(key)
        if key not in self.state:
            assert _error(deferred) == KEY_NOT_FOUND
            return
        prev = self.state[key][0]
        _result(deferred)
        self._wrote(DELETED, key, None, prev)

    @rule()
    def compaction_tick(self) -> None:
        _result(self.storage.mark_compaction())
        self.revision = self.storage.current_revision()  # a tick is a write of its own
        self.history.append((self.revision, dict(self.state)))

    @invariant()
    def reads_are_the_model(self) -> None:
        assert self.storage.current_revision() == self.revision
        for key in (PREFIX + n for n in (b"a", b"b", b"c", b"d")):
            if key in self.state:
                stored = self.storage.get(key)
                assert (stored.object["data"]["v"], stored.revision) == self.state[key]
            else:
                try:
                    self.storage.get(key)
                except StorageError as e:
                    assert e.code == KEY_NOT_FOUND
                else:
                    raise AssertionError(f"{key!r} is still there")

    @invariant()
    def lists_are_the_model_at_their_revision(self) -> None:
        compacted = self.storage.compacted_revision()
        for revision, state in self.history[-4:]:
            if revision == 0:
                continue  # revision 0 asks for the newest state
            options = ListOptions(revision=revision if revision != self.revision else 0)
            try:
                listed = self.storage.get_list(PREFIX, options)
            except StorageError as e:
                assert e.code == EXPIRED and revision < compacted
                continue
            got = {s.key: (s.object["data"]["v"], s.revision) for s in listed.items}
            assert got == state, revision
            assert [s.key for s in listed.items] == sorted(state)
        pages, after = [], b""
        while True:
            page = self.storage.get_list(PREFIX, ListOptions(start_after=after, limit=1))
            pages += [s.key for s in page.items]
            if page.continue_key is None:
                break
            after = page.continue_key
        assert pages == sorted(self.state)

    @invariant()
    def the_change_log_replays_every_write(self) -> None:
        try:
            events = self.storage.events_since(self.start, PREFIX)
        except StorageError as e:
            assert e.code == EXPIRED
            return
        replayed = [
            (
                e.type,
                e.key,
                None if e.type == DELETED else e.stored.object["data"]["v"],
                e.prev.object["data"]["v"] if e.prev is not None else None,
            )
            for e in events
        ]
        assert replayed == self.log
        assert [e.revision for e in events] == sorted(e.revision for e in events)


TestStorageModel = StorageModel.TestCase
# The number of runs comes from the loaded profile (tests/fuzz/conftest.py).
TestStorageModel.settings = settings(stateful_step_count=30, deadline=None)
