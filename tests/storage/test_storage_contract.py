"""One storage test suite, run against both backends: LMDB (its writer a thread, a
process as a server runs it, and the writer a ``--workers`` supervisor runs for all its
workers) and a real etcd.

The registry relies on these behaviours of ``Storage`` whatever is underneath: revisions
that only grow, compare-and-swap that never loses an update, lists and watches at
exact revisions, kube's compaction and size limits.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import ensureDeferred, gatherResults
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.sharedwriter import SharedWriter
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    EXPIRED,
    INVALID_OBJECT,
    KEY_EXISTS,
    KEY_NOT_FOUND,
    MODIFIED,
    REQUEST_TOO_LARGE,
    TOO_LARGE_REVISION,
    Event,
    ListOptions,
    Preconditions,
    Storage,
    StorageError,
)
from platform_api.storage.lmdb_connection import WriterConnection
from platform_api.storage.lmdb_process import WriterProcess
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.transformer import ValueTransformer
from tests.storage.etcd_server import EtcdServer, start_etcd

_namespaces = itertools.count()


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = start_etcd(str(tmp_path_factory.mktemp("etcd")), fsync=False)
    yield server
    server.stop()


class Backend:
    def __init__(self, storage: Storage, events: list[Event], close: Callable[[], None]):
        self.storage = storage
        self.events = events
        self.close = close


def _lmdb(tmp_path: Path, transformer: ValueTransformer | None = None) -> Backend:
    pool = ThreadPool(1, 1, "lmdb-writer")
    pool.start()
    events: list[Event] = []
    env = open_environment(str(tmp_path / "db"), 64 * 2**20)
    storage = LMDBStorage(
        env,
        lambda work: deferToThreadPool(reactor, pool, work),
        events.extend,
        transformer=transformer,
    )

    def close() -> None:
        pool.stop()
        env.close()

    return Backend(storage, events, close)


def _lmdb_process(tmp_path: Path) -> Backend:
    """LMDB as the server runs it: a writer process commits (lmdb_writer.py)."""
    events: list[Event] = []
    path = str(tmp_path / "db")
    env = open_environment(path, 64 * 2**20)
    writer = WriterProcess(reactor, path, 64 * 2**20, 64 * 2**20)
    storage = LMDBStorage(env, None, events.extend, writer=writer)

    def close() -> None:
        writer.stop()
        env.close()

    return Backend(storage, events, close)


def _lmdb_shared(tmp_path: Path) -> Backend:
    """LMDB as workers run it: the supervisor's writer (sharedwriter.py), on its socket."""
    (tmp_path / "run").mkdir(mode=0o700)
    events: list[Event] = []
    supervisor = SharedWriter(reactor, ServerConfig(data_dir=str(tmp_path)))
    supervisor.start()
    env = open_environment(str(tmp_path / "db"), 64 * 2**20)
    writer = WriterConnection(reactor, supervisor.socket)
    storage = LMDBStorage(env, None, events.extend, writer=writer)

    def close() -> None:
        writer.stop()
        supervisor.stop()
        env.close()

    return Backend(storage, events, close)


def _etcd(server: EtcdServer, transformer: ValueTransformer | None = None) -> Backend:
    client = EtcdClient([server.endpoint], reactor)
    events: list[Event] = []
    layout = KeyLayout("/registry", [("", "configmaps")])
    storage = EtcdStorage(client, layout, reactor, on_commit=events.extend, transformer=transformer)
    storage.load()
    storage.start()

    def close() -> None:
        storage.stop()
        client.close()

    return Backend(storage, events, close)


@pytest.fixture(params=["lmdb", "lmdb-process", "lmdb-shared", "etcd"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "lmdb":
        made = _lmdb(tmp_path)
    elif request.param == "lmdb-process":
        made = _lmdb_process(tmp_path)
    elif request.param == "lmdb-shared":
        made = _lmdb_shared(tmp_path)
    else:
        made = _etcd(request.getfixturevalue("etcd"))
    yield made
    made.close()


class Rotating:
    """A value transformer whose write key a test turns, as a reloaded encryption config
    does: values of another key still read, and read as stale."""

    def __init__(self) -> None:
        self.key = b"k1:"
        self.written: list[bytes] = []  # the key of each value written

    def to_storage(self, key: bytes, data: bytes, context: bytes | None = None) -> bytes:
        self.written.append(self.key)
        return self.key + data

    def from_storage(
        self, key: bytes, data: bytes, context: bytes | None = None
    ) -> tuple[bytes, bool]:
        return data[3:], not data.startswith(self.key)


@pytest.fixture(params=["lmdb", "etcd"])
def rotating(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, Rotating]]:
    """A backend that encrypts at rest (an LMDB server then commits on its own writer
    thread: the keys never leave the serving process)."""
    transformer = Rotating()
    if request.param == "lmdb":
        made = _lmdb(tmp_path, transformer)
    else:
        made = _etcd(request.getfixturevalue("etcd"), transformer)
    yield made, transformer
    made.close()


@pytest.fixture
def ns() -> str:
    """A namespace of the test's own: the etcd is shared by the module."""
    return f"ns{next(_namespaces)}"


def key(ns: str, name: str) -> bytes:
    return f"/core/configmaps/{ns}/{name}".encode()


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def code_of(work: Any) -> str:
    try:
        await work
    except StorageError as e:
        return e.code
    raise AssertionError("no StorageError")


@pytest_twisted.ensureDeferred
async def test_create_get_and_key_exists(backend: Backend, ns: str) -> None:
    s = backend.storage
    before = s.current_revision()
    stored = await s.create(key(ns, "a"), cm("a", x="1"))
    assert stored.revision > before and s.current_revision() >= stored.revision
    assert stored.object["metadata"]["resourceVersion"] == str(stored.revision)
    got = s.get(key(ns, "a"))
    assert got.revision == stored.revision and got.object["data"] == {"x": "1"}
    assert got.object["metadata"]["resourceVersion"] == str(stored.revision)
    assert await code_of(s.create(key(ns, "a"), cm("a"))) == KEY_EXISTS
    with pytest.raises(StorageError) as e:
        s.get(key(ns, "missing"))
    assert e.value.code == KEY_NOT_FOUND


@pytest_twisted.ensureDeferred
async def test_concurrent_updates_all_land(backend: Backend, ns: str) -> None:
    s = backend.storage
    await s.create(key(ns, "n"), cm("n", count="0"))

    def increment(obj: dict[str, Any] | None, _: Any) -> dict[str, Any]:
        assert obj is not None
        obj["data"]["count"] = str(int(obj["data"]["count"]) + 1)
        return obj

    updates = [ensureDeferred(s.guaranteed_update(key(ns, "n"), increment)) for _ in range(10)]
    await gatherResults(updates)
    assert s.get(key(ns, "n")).object["data"]["count"] == "10"


@pytest_twisted.ensureDeferred
async def test_an_unchanged_update_keeps_its_revision(backend: Backend, ns: str) -> None:
    s = backend.storage
    stored = await s.create(key(ns, "same"), cm("same"))
    again = await s.guaranteed_update(key(ns, "same"), lambda obj, _: obj)
    assert again.revision == stored.revision
    assert await code_of(s.guaranteed_update(key(ns, "none"), lambda o, _: o)) == KEY_NOT_FOUND
    made = await s.guaranteed_update(
        key(ns, "new"), lambda obj, _: cm("new"), ignore_not_found=True
    )
    assert s.get(key(ns, "new")).revision == made.revision


@pytest_twisted.ensureDeferred
async def test_an_unchanged_update_rewrites_a_value_of_an_older_key(
    rotating: tuple[Backend, Rotating], ns: str
) -> None:
    """kube's storage migration after a key rotation: replacing each object unchanged
    stores it again with the new key, and then writes nothing more."""
    backend, transformer = rotating
    s = backend.storage
    stored = await s.create(key(ns, "rotated"), cm("rotated", a="1"))
    unchanged = await s.guaranteed_update(key(ns, "rotated"), lambda obj, _: obj)
    assert unchanged.revision == stored.revision
    transformer.key = b"k2:"
    assert s.get(key(ns, "rotated")).object["data"] == {"a": "1"}  # the old key still reads
    rewritten = await s.guaranteed_update(key(ns, "rotated"), lambda obj, _: obj)
    assert rewritten.revision > stored.revision
    assert transformer.written == [b"k1:", b"k2:"]
    again = await s.guaranteed_update(key(ns, "rotated"), lambda obj, _: obj)
    assert again.revision == rewritten.revision
    assert transformer.written == [b"k1:", b"k2:"]
    assert s.get(key(ns, "rotated")).object["data"] == {"a": "1"}


@pytest_twisted.ensureDeferred
async def test_delete_with_preconditions(backend: Backend, ns: str) -> None:
    s = backend.storage
    obj = cm("d")
    obj["metadata"]["uid"] = "u1"
    stored = await s.create(key(ns, "d"), obj)
    wrong = Preconditions(uid="u2")
    assert await code_of(s.delete(key(ns, "d"), preconditions=wrong)) == INVALID_OBJECT
    last = await s.delete(key(ns, "d"), preconditions=Preconditions(uid="u1"))
    # The last state at the deletion's revision, as kube's storage answers a delete.
    assert last.revision > stored.revision
    assert last.object["metadata"]["resourceVersion"] == str(last.revision)
    assert last.object["metadata"]["uid"] == "u1"
    assert await code_of(s.delete(key(ns, "d"))) == KEY_NOT_FOUND


@pytest_twisted.ensureDeferred
async def test_a_single_object_list_reads_its_key_alone(backend: Backend, ns: str) -> None:
    """A ``metadata.name`` list (``single``) reads one key, now and at a past revision,
    not the keys it prefixes (kube's cacher gets the key)."""
    s = backend.storage
    a = (await s.create(key(ns, "a"), cm("a"))).revision
    await s.create(key(ns, "ab"), cm("ab"))
    single = ListOptions(single=True)
    now = s.get_list(key(ns, "a"), single)
    assert ([i.key for i in now.items], now.revision) == ([key(ns, "a")], s.current_revision())
    assert s.get_list(key(ns, "absent"), single).items == []
    await s.delete(key(ns, "a"))
    await s.delete(key(ns, "ab"))  # undone in the past's state, and still not read
    past = s.get_list(key(ns, "a"), ListOptions(revision=a + 1, single=True))
    assert ([i.key for i in past.items], past.revision) == ([key(ns, "a")], a + 1)
    assert s.get_list(key(ns, "a"), single).items == []


def _with_data(data: dict[str, str], obj: dict[str, Any], _: Any) -> dict[str, Any]:
    return {**obj, "data": data}


@pytest_twisted.ensureDeferred
async def test_every_past_chunk_is_the_state_the_prefix_had(backend: Backend, ns: str) -> None:
    """Random creates, updates and deletes in two namespaces (one's name prefixes the
    other's); every list at a past revision, from any key on, in chunks of any size, is
    the objects the namespace held then, with the count of those left."""
    rng = random.Random(7)
    s = backend.storage
    first = s.current_revision()
    states: dict[int, dict[bytes, int]] = {first: {}}
    state: dict[bytes, int] = {}
    for i in range(60):
        k = key(rng.choice([ns, ns + "x"]), f"o{rng.randrange(8)}")
        if k in state and rng.random() < 0.4:
            state.pop(k)
            revision = (await s.delete(k)).revision
        elif k in state:
            edit = functools.partial(_with_data, {"i": str(i)})
            revision = (await s.guaranteed_update(k, edit)).revision
            state[k] = revision
        else:
            revision = state[k] = (await s.create(k, cm(k.decode().rpartition("/")[2]))).revision
        states[revision] = dict(state)
    prefix = f"/core/configmaps/{ns}/".encode()
    for target, then in states.items():
        if target in (0, s.current_revision()):  # 0 reads the newest state
            continue
        mine = sorted(k for k in then if k.startswith(prefix))
        for start in [b"", *mine[:3]]:
            after = [k for k in mine if k > start]
            for limit in (0, 1, 2):
                got = s.get_list(prefix, ListOptions(target, start, limit))
                taken = after[:limit] if limit else after
                assert [(i.key, i.revision) for i in got.items] == [(k, then[k]) for k in taken]
                left = len(after) - len(taken)
                assert (got.continue_key, got.remaining) == (
                    (taken[-1], left) if left else (None, None)
                )
        for name in ("o1", "o5"):
            one = s.get_list(key(ns, name), ListOptions(target, single=True))
            assert [i.key for i in one.items] == [k for k in [key(ns, name)] if k in then]


@pytest_twisted.ensureDeferred
async def test_lists_page_and_read_the_past(backend: Backend, ns: str) -> None:
    s = backend.storage
    revisions = [(await s.create(key(ns, f"l{i}"), cm(f"l{i}"))).revision for i in range(5)]
    prefix = f"/core/configmaps/{ns}/".encode()
    first = s.get_list(prefix, ListOptions(limit=2))
    assert [i.object["metadata"]["name"] for i in first.items] == ["l0", "l1"]
    assert first.continue_key == key(ns, "l1") and first.remaining == 3
    rest = s.get_list(prefix, ListOptions(start_after=key(ns, "l1"), revision=first.revision))
    assert [i.object["metadata"]["name"] for i in rest.items] == ["l2", "l3", "l4"]
    await s.delete(key(ns, "l0"))
    past = s.get_list(prefix, ListOptions(revision=revisions[2]))
    assert [i.object["metadata"]["name"] for i in past.items] == ["l0", "l1", "l2"]
    assert past.revision == revisions[2]
    assert s.count(prefix) == 4
    with pytest.raises(StorageError) as e:
        s.get_list(prefix, ListOptions(revision=s.current_revision() + 100))
    assert e.value.code == TOO_LARGE_REVISION


@pytest_twisted.ensureDeferred
async def test_counts_and_first_chunks_follow_every_write(backend: Backend, ns: str) -> None:
    """Random creates, updates and deletes in two namespaces (one's name prefixes the
    other's): after each write, a namespace's count and a first chunk's count of the
    keys left are what a walk of the namespace finds."""
    rng = random.Random(11)
    s = backend.storage
    state: set[bytes] = set()
    for i in range(40):
        k = key(rng.choice([ns, ns + "x"]), f"o{rng.randrange(6)}")
        if k in state and rng.random() < 0.5:
            state.discard(k)
            await s.delete(k)
        elif k in state:
            await s.guaranteed_update(k, functools.partial(_with_data, {"i": str(i)}))
        else:
            state.add(k)
            await s.create(k, cm(k.decode().rpartition("/")[2]))
        for space in (ns, ns + "x"):
            prefix = f"/core/configmaps/{space}/".encode()
            mine = sorted(k for k in state if k.startswith(prefix))
            assert s.count(prefix) == len(mine)
            for limit in (1, 2):
                got = s.get_list(prefix, ListOptions(limit=limit))
                left = len(mine) - limit
                assert got.remaining == (left if left > 0 else None)
                assert [i.key for i in got.items] == mine[:limit]


@pytest_twisted.ensureDeferred
async def test_a_paged_list_counts_the_keys_left_at_its_revision(backend: Backend, ns: str) -> None:
    """Every chunk of a paged list tells the keys left after it as of the list's revision,
    while writes (creates before and after the chunk, deletes) go on between chunks;
    and a chunk asked for twice tells the same."""
    s = backend.storage
    prefix = f"/core/configmaps/{ns}/".encode()
    for i in range(9):
        await s.create(key(ns, f"p{i}"), cm(f"p{i}"))
    for limit in (1, 2, 4):
        chunk = s.get_list(prefix, ListOptions(limit=limit))
        revision, seen = chunk.revision, [i.key for i in chunk.items]
        while chunk.continue_key is not None:
            assert chunk.remaining == 9 - len(seen)
            await s.create(key(ns, f"p{len(seen)}-{limit}"), cm("new"))  # after the revision
            options = ListOptions(revision, chunk.continue_key, limit)
            again = s.get_list(prefix, options)
            chunk = s.get_list(prefix, options)
            assert (again.remaining, again.continue_key) == (chunk.remaining, chunk.continue_key)
            seen += [i.key for i in chunk.items]
        assert chunk.remaining is None
        assert seen == [key(ns, f"p{i}") for i in range(9)]
        for item in s.get_list(prefix, ListOptions()).items:
            if b"-" in item.key:
                await s.delete(item.key)


@pytest_twisted.ensureDeferred
async def test_events_in_revision_order_with_previous_states(backend: Backend, ns: str) -> None:
    s = backend.storage
    start = s.current_revision()
    await s.create(key(ns, "e"), cm("e", v="1"))
    await s.guaranteed_update(key(ns, "e"), lambda obj, _: {**obj, "data": {"v": "2"}})
    await s.delete(key(ns, "e"))
    mine = [e for e in backend.events if e.key == key(ns, "e")]
    assert [e.type for e in mine] == [ADDED, MODIFIED, DELETED]
    assert mine[1].prev is not None and mine[1].prev.object["data"] == {"v": "1"}
    assert mine[2].stored is not None and mine[2].stored.object["data"] == {"v": "2"}
    logged = s.events_since(start, f"/core/configmaps/{ns}/".encode())
    assert [(e.type, e.revision) for e in logged] == [(e.type, e.revision) for e in mine]


@pytest_twisted.ensureDeferred
async def test_compaction_expires_old_lists(backend: Backend, ns: str) -> None:
    s = backend.storage
    old = (await s.create(key(ns, "c"), cm("c"))).revision
    await s.mark_compaction()
    await s.create(key(ns, "c2"), cm("c2"))
    await s.mark_compaction()
    prefix = f"/core/configmaps/{ns}/".encode()
    with pytest.raises(StorageError) as e:
        s.get_list(prefix, ListOptions(revision=old))
    assert e.value.code == EXPIRED


@pytest_twisted.ensureDeferred
async def test_writes_etcd_would_refuse_are_refused(backend: Backend, ns: str) -> None:
    big = cm("big", v="x" * 1_600_000)
    assert await code_of(backend.storage.create(key(ns, "big"), big)) == REQUEST_TOO_LARGE
    with pytest.raises(StorageError):
        backend.storage.get(key(ns, "big"))
