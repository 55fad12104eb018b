"""The message table and error mapping, without an etcd: wire bytes as etcd's protos give."""

from __future__ import annotations

import pytest

from platform_api.storage.etcd import Compare, RequestTooLarge, Unavailable, proto
from platform_api.storage.etcd.errors import (
    Compacted,
    EtcdError,
    FutureRevision,
    NoSpace,
    from_status,
)
from platform_api.storage.etcd.kv import (
    CASResult,
    KeyValue,
    delete_op,
    put_op,
    range_op,
    swap_request,
)


def test_compare_sends_a_zero_revision() -> None:
    # target MOD (field 2 = 2), key (field 3), mod_revision (field 6) = 0: a oneof, so sent
    assert Compare(b"k", "MOD", 0).encode().SerializeToString() == b"\x10\x02\x1a\x01k0\x00"
    assert Compare(b"k", "VALUE", b"v").encode().SerializeToString() == b"\x10\x03\x1a\x01k:\x01v"


@pytest.mark.parametrize("target", ["VERSION", "CREATE", "MOD"])
@pytest.mark.parametrize("revision", [0, 1, 127, 128, 2**31, 2**62, -1])
@pytest.mark.parametrize("value", [None, b"", b"v", b"\x00" * 200, b"k8s" * 6000])
@pytest.mark.parametrize("key", [b"/registry/configmaps/ns/cm", b"k" * 300])
@pytest.mark.parametrize("read_back", [True, False])
def test_swap_request_is_the_messages_bytes(
    key: bytes, target: str, revision: int, value: bytes | None, read_back: bool
) -> None:
    then = delete_op(key) if value is None else put_op(key, value)
    guard = Compare(key, target, revision).encode()  # type: ignore[arg-type]
    failure = [range_op(key)] if read_back else []
    message = proto.TxnRequest(compare=[guard], success=[then], failure=failure)
    made = swap_request(key, target, revision, value, read_back=read_back)  # type: ignore[arg-type]
    assert made == message.SerializeToString()


def test_swap_result_decodes_either_branch() -> None:
    won = proto.TxnResponse(succeeded=True)
    won.header.revision = 42
    won.responses.add().response_put.header.revision = 42
    assert CASResult.decode(won) == CASResult(True, 42)
    lost = proto.TxnResponse(succeeded=False)
    lost.header.revision = 50
    found = lost.responses.add().response_range.kvs.add()
    found.key, found.value, found.mod_revision, found.create_revision = b"k", b"v", 49, 7
    assert CASResult.decode(lost) == CASResult(False, 50, KeyValue(b"k", b"v", 7, 49))
    unread = proto.TxnResponse(succeeded=False)  # a create's: it reads nothing back
    unread.header.revision = 52
    assert CASResult.decode(unread) == CASResult(False, 52, None)
    gone = proto.TxnResponse(succeeded=False)
    gone.header.revision = 51
    gone.responses.add().response_range.SetInParent()
    assert CASResult.decode(gone) == CASResult(False, 51, None)


def test_watch_request_field_numbers() -> None:
    create = proto.WatchCreateRequest(key=b"/a", start_revision=5, prev_kv=True)
    wire = proto.WatchRequest(create_request=create).SerializeToString()
    assert wire == b"\n\x08\n\x02/a\x18\x050\x01"
    progress = proto.WatchRequest(progress_request=proto.WatchProgressRequest())
    assert progress.SerializeToString() == b"\x1a\x00"


def test_errors_by_etcd_message() -> None:
    compacted = from_status(11, "etcdserver: mvcc: required revision has been compacted")
    assert isinstance(compacted, Compacted) and compacted.code == 11
    future = from_status(11, "etcdserver: mvcc: required revision is a future revision")
    assert isinstance(future, FutureRevision)
    assert isinstance(from_status(3, "etcdserver: request is too large"), RequestTooLarge)
    grpc_limit = from_status(8, "grpc: received message larger than max (3 vs. 2)")
    assert isinstance(grpc_limit, RequestTooLarge)
    assert isinstance(from_status(14, "etcdserver: no leader"), Unavailable)
    assert isinstance(from_status(4, "context deadline exceeded"), Unavailable)
    other = from_status(7, "etcdserver: permission denied")
    assert type(other) is EtcdError and str(other) == "etcdserver: permission denied"


def test_a_full_etcd_is_no_space() -> None:
    error = from_status(8, "etcdserver: mvcc: database space exceeded")
    assert isinstance(error, NoSpace)
    assert error.message == "etcdserver: mvcc: database space exceeded"
