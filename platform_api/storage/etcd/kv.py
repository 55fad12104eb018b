"""etcd's key-value records, transaction parts and results, decoded from its gRPC messages
into plain frozen dataclasses the store can keep and compare."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from platform_api.storage.etcd import proto

Target = Literal["VERSION", "CREATE", "MOD", "VALUE"]
Result = Literal["EQUAL", "GREATER", "LESS", "NOT_EQUAL"]
_TARGETS = {"VERSION": (0, "version"), "CREATE": (1, "create_revision"), "MOD": (2, "mod_revision")}
_RESULTS = {"EQUAL": 0, "GREATER": 1, "LESS": 2, "NOT_EQUAL": 3}


def prefix_end(prefix: bytes) -> bytes:
    """The ``range_end`` that covers every key starting with ``prefix`` (etcd's GetPrefixRangeEnd)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\x00"  # every key


@dataclass(frozen=True)
class KeyValue:
    key: bytes
    value: bytes = b""
    create_revision: int = 0
    mod_revision: int = 0
    version: int = 0
    lease: int = 0

    @classmethod
    def decode(cls, kv: Any) -> KeyValue:
        return cls(kv.key, kv.value, kv.create_revision, kv.mod_revision, kv.version, kv.lease)


@dataclass(frozen=True)
class RangeResult:
    """``revision`` is the store's revision when the range was served."""

    kvs: list[KeyValue]
    count: int
    more: bool
    revision: int

    @classmethod
    def decode(cls, r: Any) -> RangeResult:
        kvs = [KeyValue.decode(kv) for kv in r.kvs]
        return cls(kvs, r.count, r.more, r.header.revision)


@dataclass(frozen=True)
class PutResult:
    revision: int
    prev_kv: KeyValue | None = None

    @classmethod
    def decode(cls, r: Any) -> PutResult:
        prev = KeyValue.decode(r.prev_kv) if r.HasField("prev_kv") else None
        return cls(r.header.revision, prev)


@dataclass(frozen=True)
class DeleteResult:
    revision: int
    deleted: int
    prev_kvs: list[KeyValue] = field(default_factory=list)

    @classmethod
    def decode(cls, r: Any) -> DeleteResult:
        return cls(r.header.revision, r.deleted, [KeyValue.decode(kv) for kv in r.prev_kvs])


@dataclass(frozen=True)
class Compare:
    """One guard of a transaction: ``target`` of ``key`` ``result`` ``value``."""

    key: bytes
    target: Target
    value: int | bytes
    result: Result = "EQUAL"

    def encode(self) -> Any:
        out = proto.Compare(key=self.key, result=_RESULTS[self.result])
        if self.target == "VALUE":
            out.target, out.value = 3, self.value
        else:
            out.target, name = _TARGETS[self.target]
            setattr(out, name, self.value)  # set even when 0: it is a oneof
        return out


def put_op(key: bytes, value: bytes, *, prev_kv: bool = False) -> Any:
    return proto.RequestOp(request_put=proto.PutRequest(key=key, value=value, prev_kv=prev_kv))


def delete_op(key: bytes, range_end: bytes = b"", *, prev_kv: bool = False) -> Any:
    request = proto.DeleteRangeRequest(key=key, range_end=range_end, prev_kv=prev_kv)
    return proto.RequestOp(request_delete_range=request)


def range_op(key: bytes, range_end: bytes = b"", *, limit: int = 0) -> Any:
    request = proto.RangeRequest(key=key, range_end=range_end, limit=limit)
    return proto.RequestOp(request_range=request)


# -- compare-and-swap, encoded by hand ------------------------------------------------
# Every create, update and delete is one such transaction.  Built from upb messages it
# cost ~19 us of CPU (three nested messages made from keyword arguments, then copied into
# their parents); these bytes cost ~3 us.  The field numbers are rpc.proto's (proto.py),
# and the tests hold the bytes equal to the messages' own serialization.


_BYTE = [bytes((i,)) for i in range(128)]


def _varint(value: int) -> bytes:
    if 0 <= value < 128:
        return _BYTE[value]
    value &= (1 << 64) - 1  # an int64 below zero is ten bytes of two's complement
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _scalar(tag: bytes, payload: bytes) -> bytes:
    """A bytes field as proto3 writes it: not at all when empty."""
    return tag + _varint(len(payload)) + payload if payload else b""


# A Compare's target (an enum: 0 is not written) and its value's tag (a varint in the
# target_union oneof: written even when 0).
_GUARDS = {
    "VERSION": (b"", b"\x20"),
    "CREATE": (b"\x10\x01", b"\x28"),
    "MOD": (b"\x10\x02", b"\x30"),
}


def swap_request(
    key: bytes, target: Target, revision: int, value: bytes | None, *, read_back: bool = True
) -> bytes:
    """A TxnRequest: if ``key``'s ``target`` (VERSION, CREATE or MOD) is ``revision``,
    put ``value`` (delete the key when None), else read the key when ``read_back`` (a
    create, as kube's, reads nothing back: its request is then the size kube's is, which
    etcd's --max-request-bytes weighs)."""
    enum, tag = _GUARDS[target]
    guard = enum + _scalar(b"\x1a", key) + tag + _varint(revision)  # result EQUAL: unwritten
    first = _scalar(b"\x0a", key)  # field 1 of PutRequest, DeleteRangeRequest, RangeRequest
    if value is None:  # RequestOp.request_delete_range (3)
        then = b"\x1a" + _varint(len(first)) + first
    else:  # RequestOp.request_put (2): key, value
        put = first + _scalar(b"\x12", value)
        then = b"\x12" + _varint(len(put)) + put
    # TxnRequest: compare (1), success (2), failure (3): RequestOp.request_range (1)
    parts = [b"\x0a", _varint(len(guard)), guard, b"\x12", _varint(len(then)), then]
    if read_back:
        otherwise = b"\x0a" + _varint(len(first)) + first
        parts += [b"\x1a", _varint(len(otherwise)), otherwise]
    return b"".join(parts)


@dataclass(frozen=True)
class TxnResult:
    """``responses`` are decoded per op kind: RangeResult, PutResult or DeleteResult."""

    succeeded: bool
    revision: int
    responses: list[RangeResult | PutResult | DeleteResult]

    @classmethod
    def decode(cls, r: Any) -> TxnResult:
        out: list[RangeResult | PutResult | DeleteResult] = []
        for item in r.responses:
            kind = item.WhichOneof("response")
            if kind == "response_range":
                out.append(RangeResult.decode(item.response_range))
            elif kind == "response_put":
                out.append(PutResult.decode(item.response_put))
            elif kind == "response_delete_range":
                out.append(DeleteResult.decode(item.response_delete_range))
        return cls(r.succeeded, r.header.revision, out)


@dataclass(frozen=True)
class CASResult:
    """A compare-and-swap: on success ``revision`` is the write's; on failure ``current`` is
    the key as it is now (None when absent) and ``revision`` the store's."""

    succeeded: bool
    revision: int
    current: KeyValue | None = None

    @classmethod
    def decode(cls, r: Any) -> CASResult:
        """From the TxnResponse of a ``swap_request``."""
        if r.succeeded:
            return cls(True, r.header.revision)
        found = r.responses[0].response_range.kvs if r.responses else ()
        return cls(False, r.header.revision, KeyValue.decode(found[0]) if found else None)


@dataclass(frozen=True)
class Status:
    revision: int
    version: str
    db_size: int
    leader: int
    member_id: int
    raft_term: int

    @classmethod
    def decode(cls, r: Any) -> Status:
        header = r.header
        return cls(header.revision, r.version, r.dbSize, r.leader, header.member_id, r.raftTerm)
