"""EtcdClient against a real etcd (tests/storage/etcd_server.py): every call, CAS, watches,
compaction, errors, TLS and failover."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import CancelledError, ensureDeferred
from twisted.internet.task import deferLater

from platform_api.storage.etcd import (
    Compacted,
    Compare,
    EtcdClient,
    FutureRevision,
    KeyValue,
    NoSpace,
    RequestTooLarge,
    TLSConfig,
    Unavailable,
    delete_op,
    prefix_end,
    put_op,
    range_op,
)
from tests.storage.etcd_server import EtcdServer, start_etcd


def unique() -> bytes:
    return f"/registry/t-{uuid.uuid4().hex[:8]}/".encode()


def client(*endpoints: str, **kwargs: object) -> EtcdClient:
    return EtcdClient(list(endpoints), reactor, timeout=5.0, **kwargs)  # type: ignore[arg-type]


def test_prefix_end() -> None:
    assert prefix_end(b"/a/") == b"/a0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff\xff") == b"\x00"


@pytest_twisted.ensureDeferred
async def test_put_get_range_delete(etcd: EtcdServer) -> None:
    c, p = client(etcd.endpoint), unique()
    try:
        first = await c.put(p + b"a", b"1")
        second = await c.put(p + b"b", b"2")
        assert second.revision == first.revision + 1
        again = await c.put(p + b"a", b"3", prev_kv=True)
        assert again.prev_kv is not None and again.prev_kv.value == b"1"

        kv = await c.get(p + b"a")
        assert kv is not None
        assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == (
            b"3",
            first.revision,
            again.revision,
            2,
        )
        assert await c.get(p + b"missing") is None

        page = await c.range(p, prefix_end(p), limit=1)
        assert [k.key for k in page.kvs] == [p + b"a"]
        assert (page.count, page.more, page.revision) == (2, True, again.revision)

        old = await c.range(p, prefix_end(p), revision=first.revision)
        assert [(k.key, k.value) for k in old.kvs] == [(p + b"a", b"1")]

        counted = await c.range(p, prefix_end(p), count_only=True)
        assert (counted.count, counted.kvs) == (2, [])
        keys = await c.range(p, prefix_end(p), keys_only=True)
        assert [(k.key, k.value) for k in keys.kvs] == [(p + b"a", b""), (p + b"b", b"")]

        gone = await c.delete(p, prefix_end(p), prev_kv=True)
        assert gone.deleted == 2 and gone.revision == again.revision + 1
        assert sorted(k.value for k in gone.prev_kvs) == [b"2", b"3"]
        assert (await c.range(p, prefix_end(p))).count == 0
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_get_many_reads_a_lone_key_with_a_range(etcd: EtcdServer) -> None:
    """Several keys are one transaction of ranges; one key is a range, as kube reads it."""
    c, p = client(etcd.endpoint), unique()
    methods: list[str] = []
    real = c.transport.call

    def recorded(method: str, *args: Any, **kwargs: Any) -> Any:
        methods.append(method)
        return real(method, *args, **kwargs)

    c.transport.call = recorded  # type: ignore[method-assign]
    try:
        await c.put(p + b"a", b"1")
        methods.clear()
        assert [kv.value if kv else None for kv in await c.get_many([p + b"a"])] == [b"1"]
        assert await c.get_many([p + b"missing"]) == [None]
        both = await c.get_many([p + b"a", p + b"missing"])
        assert [kv.value if kv else None for kv in both] == [b"1", None]
        assert methods == ["/etcdserverpb.KV/Range"] * 2 + ["/etcdserverpb.KV/Txn"]
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_compare_and_swap(etcd: EtcdServer) -> None:
    c, key = client(etcd.endpoint), unique() + b"obj"
    try:
        made = await c.create(key, b"v1")
        assert made.succeeded and made.current is None
        clash = await c.create(key, b"other")
        assert not clash.succeeded
        assert clash.current is None  # a create reads nothing back, as kube's
        assert clash.revision == made.revision
        assert (await c.get(key)).value == b"v1"  # type: ignore[union-attr]

        stale = await c.update(key, b"v2", made.revision - 1)
        assert not stale.succeeded and stale.current is not None
        assert stale.current.mod_revision == made.revision
        updated = await c.update(key, b"v2", made.revision)
        assert updated.succeeded and updated.revision == made.revision + 1

        refused = await c.delete_at(key, made.revision)
        assert not refused.succeeded and refused.current is not None
        assert refused.current.value == b"v2"
        deleted = await c.delete_at(key, updated.revision)
        assert deleted.succeeded and deleted.revision == updated.revision + 1
        assert await c.get(key) is None

        # version guard and a multi-op transaction, read back in its responses
        result = await c.txn(
            [Compare(key, "VERSION", 0)],
            [put_op(key, b"x"), range_op(key), delete_op(key + b"-none")],
        )
        assert result.succeeded and len(result.responses) == 3
        assert result.responses[1].kvs[0].value == b"x"  # type: ignore[union-attr]
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_watch_in_order_with_prev_kv(etcd: EtcdServer) -> None:
    c, p = client(etcd.endpoint), unique()
    try:
        start = await c.put(p + b"a", b"1")
        watch = await c.watch(p, prefix_end(p), start_revision=start.revision)
        await c.put(p + b"a", b"2")
        await c.put(p + b"b", b"3")
        await c.delete(p + b"a")
        seen: list[tuple[str, bytes, bytes, KeyValue | None]] = []
        while len(seen) < 4:
            response = await watch.__anext__()
            seen += [(e.type, e.kv.key, e.kv.value, e.prev_kv) for e in response.events]
        watch.cancel()
        assert [(t, k, v) for t, k, v, _ in seen] == [
            ("PUT", p + b"a", b"1"),
            ("PUT", p + b"a", b"2"),
            ("PUT", p + b"b", b"3"),
            ("DELETE", p + b"a", b""),
        ]
        prevs = [prev.value if prev else None for *_, prev in seen]
        assert prevs == [None, b"1", None, b"2"]
        with pytest.raises(StopAsyncIteration):
            await watch.__anext__()
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_watch_progress_notify(etcd: EtcdServer) -> None:
    """The fixture's etcd notifies progress every second on a quiet watch."""
    c, p = client(etcd.endpoint), unique()
    try:
        watch = await c.watch(p, prefix_end(p))
        revision = (await c.status()).revision
        response = await watch.__anext__()
        assert response.is_progress and response.revision >= revision
        watch.cancel()
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_compaction(etcd: EtcdServer) -> None:
    c, p = client(etcd.endpoint), unique()
    try:
        first = await c.put(p + b"k", b"1")
        second = await c.put(p + b"k", b"2")
        await c.compact(second.revision, physical=True)
        with pytest.raises(Compacted) as caught:
            await c.range(p + b"k", revision=first.revision)
        assert caught.value.message == "etcdserver: mvcc: required revision has been compacted"
        assert caught.value.code == 11

        watch = await c.watch(p, prefix_end(p), start_revision=first.revision)
        with pytest.raises(Compacted) as stream:
            await watch.__anext__()
        assert stream.value.compact_revision == second.revision

        with pytest.raises(FutureRevision) as future:
            await c.range(p + b"k", revision=second.revision + 1000)
        assert future.value.message == "etcdserver: mvcc: required revision is a future revision"
        kv = await c.get(p + b"k", revision=second.revision)
        assert kv is not None and kv.value == b"2"
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_status_and_too_large(etcd: EtcdServer) -> None:
    c = client(etcd.endpoint)
    try:
        put = await c.put(unique(), b"x")
        status = await c.status()
        assert status.version == "3.5.1"
        assert status.revision == put.revision and status.leader == status.member_id
        with pytest.raises(RequestTooLarge) as caught:
            await c.put(unique(), b"x" * (65 * 1024))  # the fixture allows 64 KiB
        assert caught.value.message == "etcdserver: request is too large"
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_tls_client_certificate(etcd_tls: EtcdServer) -> None:
    assert etcd_tls.tls is not None
    files = etcd_tls.tls
    tls = TLSConfig.from_files(files.cafile, files.certfile, files.keyfile)
    c, key = client(etcd_tls.endpoint, tls=tls), unique()
    try:
        await c.put(key, b"secret")
        kv = await c.get(key)
        assert kv is not None and kv.value == b"secret"
        watch = await c.watch(key)
        await c.put(key, b"again")
        response = await watch.__anext__()
        assert response.events[0].kv.value == b"again"
        watch.cancel()
    finally:
        c.close()

    anonymous = client(etcd_tls.endpoint, tls=TLSConfig.from_files(files.cafile))
    try:
        with pytest.raises(Unavailable):  # etcd drops a handshake without a certificate
            await anonymous.get(key)
    finally:
        anonymous.close()


@pytest_twisted.ensureDeferred
async def test_failover_to_next_endpoint(etcd: EtcdServer, down_endpoint: str) -> None:
    c, key = client(down_endpoint, etcd.endpoint), unique()
    try:
        await c.put(key, b"1")  # the first endpoint refuses: the write goes to the second
        assert c.transport.current == 1
        kv = await c.get(key)
        assert kv is not None and kv.value == b"1"
        watch = await c.watch(key)
        watch.cancel()
    finally:
        c.close()

    nothing = client(down_endpoint)
    try:
        with pytest.raises(Unavailable) as caught:
            await nothing.get(key)
        assert caught.value.message.startswith("no etcd endpoint answered")
    finally:
        nothing.close()


@pytest_twisted.ensureDeferred
async def test_watch_ends_unavailable_when_etcd_stops(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.storage.etcd_server import start_etcd

    server = start_etcd(str(tmp_path_factory.mktemp("etcd-stop")), fsync=False)
    c = client(server.endpoint)
    try:
        watch = await c.watch(b"/x/", prefix_end(b"/x/"))
        await deferLater(reactor, 0, lambda: None)
        server.stop()
        with pytest.raises(Unavailable):
            while True:
                await watch.__anext__()
    finally:
        server.stop()
        c.close()


@pytest_twisted.ensureDeferred
async def test_watch_progress_request(etcd: EtcdServer) -> None:
    """WatchProgressRequest: etcd answers at once with its current revision, no events."""
    c, p = client(etcd.endpoint), unique()
    try:
        watch = await c.watch(p, prefix_end(p), progress_notify=False)
        put = await c.put(unique(), b"elsewhere")
        watch.request_progress()
        response = await watch.__anext__()
        assert response.is_progress and response.revision == put.revision
        watch.cancel()
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_watch_backlog_read_late_keeps_order(etcd: EtcdServer) -> None:
    """More responses than the high-water mark: the reader thread waits, nothing is lost."""
    c, p = client(etcd.endpoint), unique()
    try:
        watch = await c.watch(p, prefix_end(p))
        revisions = [(await c.put(p + b"%03d" % i, b"x")).revision for i in range(150)]
        seen: list[int] = []
        async for response in watch:
            seen += [e.kv.mod_revision for e in response.events]
            if len(seen) >= len(revisions):
                break
        assert seen == revisions
        watch.cancel()
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_responses_larger_than_the_flow_control_windows(etcd: EtcdServer) -> None:
    """9 MiB in one Range answer and on one watch: more than a stream's window (8 MiB), so
    it arrives only if windows reopen as it is read (values under the fixture's limit)."""
    c, p = client(etcd.endpoint), unique()
    try:
        watch = await c.watch(p, prefix_end(p))
        values = [bytes([65 + i % 26]) * 60_000 for i in range(150)]
        for i, value in enumerate(values):
            await c.put(p + b"%03d" % i, value)
        result = await c.range(p, prefix_end(p))
        assert [kv.value for kv in result.kvs] == values
        seen: list[bytes] = []
        async for response in watch:
            seen += [e.kv.value for e in response.events]
            if len(seen) == len(values):
                break
        assert seen == values
        watch.cancel()
    finally:
        c.close()


@pytest_twisted.ensureDeferred
async def test_reads_go_on_while_the_space_alarm_is_raised(tmp_path: Path) -> None:
    """etcd 3.5.1 may refuse any transaction once its quota is full, even one of ranges:
    several keys are then read with a range each, as kube reads a key."""
    etcd = start_etcd(str(tmp_path), fsync=False, quota_backend_bytes=1 << 20)
    c = client(etcd.endpoint)
    try:
        with pytest.raises(NoSpace) as full:
            for i in range(500):  # etcd finds its file full only after ~6 MB here
                await c.put(b"/full/%d" % i, b"x" * 100_000)
        assert full.value.message == "etcdserver: mvcc: database space exceeded"
        found = await c.get_many([b"/full/0", b"/full/missing", b"/full/1"])
        assert [kv.key if kv else None for kv in found] == [b"/full/0", None, b"/full/1"]
    finally:
        c.close()
        etcd.stop()


@pytest_twisted.ensureDeferred
async def test_a_call_waits_for_etcd_to_come_back(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With ``retry_for`` (the server's), a write no member can take is tried again until
    etcd is back (nothing was sent before: it cannot happen twice); one still waiting
    when cancelled (its request timed out) leaves the queue."""
    server = start_etcd(str(tmp_path_factory.mktemp("etcd-back")), fsync=False)
    c = client(server.endpoint, retry_for=30.0)
    try:
        await c.put(b"/back/a", b"1")
        server.stop()
        await deferLater(reactor, 0.2, lambda: None)  # the client has seen its connection go
        waiting = ensureDeferred(c.put(b"/back/b", b"2"))
        given_up = ensureDeferred(c.put(b"/back/c", b"3"))
        await deferLater(reactor, 0.5, lambda: None)
        assert not waiting.called
        given_up.cancel()
        given_up.addErrback(lambda f: f.trap(CancelledError))
        await given_up
        server.start()
        await waiting
        assert (await c.get(b"/back/b")).value == b"2"  # type: ignore[union-attr]
        assert await c.get(b"/back/c") is None
        assert c.transport._waiting is None
    finally:
        c.close()
        server.stop()


@pytest_twisted.ensureDeferred
async def test_a_call_gives_up_after_retry_for(down_endpoint: str) -> None:
    c = client(down_endpoint, retry_for=0.5)
    started = reactor.seconds()  # type: ignore[attr-defined]
    try:
        with pytest.raises(Unavailable) as caught:
            await c.get(b"/x")
        assert caught.value.message.startswith("no etcd endpoint answered: failed to connect")
        assert 0.5 <= reactor.seconds() - started < 2.0  # type: ignore[attr-defined]
    finally:
        c.close()
