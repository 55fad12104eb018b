"""The etcd store's consistent reads: shared quorum reads, never an older revision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults
from twisted.internet.task import deferLater
from twisted.logger import globalLogPublisher

from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.startup import status_blocking
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    UNREACHABLE,
    Event,
    StorageError,
)
from tests.storage.etcd_server import EtcdServer, start_etcd


@pytest_twisted.ensureDeferred
async def test_readers_share_quorum_reads(etcd: EtcdServer) -> None:
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/shared", [("", "configmaps")]), reactor)
    calls: list[int] = []
    real_range = client.range

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await real_range(*args, **kwargs)

    client.range = counted  # type: ignore[method-assign]
    try:
        written = await client.put(b"/shared/configmaps/ns/a", b"{}")
        revisions = await gatherResults([storage.consistent_revision() for _ in range(20)])
        assert all(r >= written.revision for r in revisions)
        assert len(calls) == 2  # the first reader's, then one for the 19 who came after
        later = await client.put(b"/shared/configmaps/ns/b", b"{}")
        assert await storage.consistent_revision() >= later.revision
    finally:
        client.close()


@pytest.fixture(scope="module")
def quiet_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """etcd's default: a progress notification on its own only every 10 minutes."""
    server = start_etcd(
        str(tmp_path_factory.mktemp("quiet")), fsync=False, progress_notify_interval="10m"
    )
    yield server
    server.stop()


@pytest_twisted.ensureDeferred
async def test_a_revision_made_outside_the_prefix_is_reached_by_a_progress_notification(
    quiet_etcd: EtcdServer,
) -> None:
    """The compaction mark, or another cluster on the same etcd, moves the revision with
    no event this store's watch will see: a consistent read still gets there, because
    the store asks etcd for a progress notification."""
    client = EtcdClient([quiet_etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/progress", [("", "configmaps")]), reactor)
    storage.load()
    storage.start()
    try:
        await client.put(b"/elsewhere/key", b"v")
        wanted = await storage.consistent_revision()
        assert storage.current_revision() < wanted  # no event brought the cache there
        arrived = storage.wait_for_revision(wanted)
        arrived.addTimeout(10, reactor)  # without a progress notification: never
        await arrived
        assert storage.current_revision() >= wanted
    finally:
        storage.stop()
        client.close()


@pytest_twisted.ensureDeferred
async def test_stopping_while_the_watch_waits_to_retry_logs_no_failure(etcd: EtcdServer) -> None:
    """stop() cancels the watch loop, also in its pause before watching again."""
    client = EtcdClient([etcd.endpoint], reactor)
    storage = EtcdStorage(client, KeyLayout("/stopping", [("", "configmaps")]), reactor)
    failures: list[Any] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_failure") is not None:
            failures.append(event)

    globalLogPublisher.addObserver(observe)
    try:
        storage.load()
        storage.start()
        client.close()  # the watch ends; the loop pauses before watching again
        await deferLater(reactor, 0.1)
        storage.stop()
        await deferLater(reactor, 0.1)
    finally:
        globalLogPublisher.removeObserver(observe)
    assert failures == []


def test_a_start_waits_for_etcd_then_fails_with_what_it_last_heard(down_endpoint: str) -> None:
    """kube's start waits out its etcd dial timeout (20 s) before it gives up; so does
    this one (its clock and sleep are the test's here; the e2e waits for a real etcd)."""
    client = EtcdClient([down_endpoint], reactor)
    now, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    with pytest.raises(StorageError) as caught:
        status_blocking(client, wait=2.0, sleep=sleep, clock=lambda: now[0])
    assert caught.value.code == UNREACHABLE
    assert str(caught.value).startswith("no etcd endpoint answered: [Errno 111]")
    assert slept == [0.5, 0.5, 0.5, 0.5]


@pytest_twisted.ensureDeferred
async def test_a_watch_behind_a_compaction_lists_again_and_tells_the_difference(
    etcd: EtcdServer,
) -> None:
    """The cache's watch resumes after its last revision; when etcd has compacted past it
    (a long outage while others wrote), the store lists again and publishes what changed
    meanwhile as one batch: the changed, the new and the deleted keys."""
    client = EtcdClient([etcd.endpoint], reactor)
    events: list[Event] = []
    layout = KeyLayout("/behind", [("", "configmaps")])
    storage = EtcdStorage(client, layout, reactor, on_commit=events.extend)
    kept, changed, gone = (f"/behind/configmaps/ns/{n}".encode() for n in ("kept", "ch", "gone"))
    for key in (kept, changed, gone):
        await client.put(key, b'{"kind":"ConfigMap","metadata":{}}')
    storage.load()
    try:
        await client.put(changed, b'{"kind":"ConfigMap","metadata":{},"data":{"k":"v"}}')
        await client.delete(gone)
        new = await client.put(b"/behind/configmaps/ns/new", b'{"kind":"ConfigMap"}')
        await client.compact(new.revision)
        storage.start()
        await storage.cache.wait_for(new.revision)
        assert [(e.type, e.key.rpartition(b"/")[2]) for e in events] == [
            (MODIFIED, b"ch"),
            (ADDED, b"new"),
            (DELETED, b"gone"),  # at the list's revision, as kube's cacher replaces its store
        ]
        assert storage.get(b"/core/configmaps/ns/ch").object["data"] == {"k": "v"}
        assert sorted(storage.cache.data) == [
            b"/core/configmaps/ns/ch",
            b"/core/configmaps/ns/kept",
            b"/core/configmaps/ns/new",
        ]
    finally:
        storage.stop()
        client.close()
