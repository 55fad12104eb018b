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
