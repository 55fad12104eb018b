"""The size of a write as etcd would see it, so every backend refuses what etcd refuses.

kube-apiserver stores an object with one etcd transaction: compare the key's mod
revision, put the value (and, for updates, read the key back on failure).  Two limits
apply to that transaction, and kube passes their errors through unchanged (500 with
no reason): the client's gRPC send limit (2 MiB) and etcd's ``--max-request-bytes``
(1.5 MiB) on the raft entry wrapping it.  The LMDB backend checks both as kube's default
etcd would (``/registry``, the default limit), so whatever it holds can always move to
etcd; the etcd backend checks only the send limit, with its own prefix, and leaves the
other to its etcd.  Sizes are Protobuf lengths; the constant part of the raft entry
(request header and id) was measured against etcd 3.6: its id's length is the member's.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.gotext import object_json
from platform_api.storage.etcd.layout import default_kube_key
from platform_api.storage.interface import (
    MAX_GRPC_SEND_BYTES,
    MAX_REQUEST_BYTES,
    REQUEST_TOO_LARGE,
    StorageError,
)

ETCD_TOO_LARGE = "etcdserver: request is too large"
_RAFT_HEADER = 14  # InternalRaftRequest header + id, around the transaction


def _varint(n: int) -> int:
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


def _field(n: int) -> int:
    """A length-delimited field of ``n`` bytes with a one-byte tag."""
    return 1 + _varint(n) + n


def etcd_key_length(key: bytes) -> int:
    """This key's length as kube-apiserver keys it in its default etcd layout."""
    return len(default_kube_key(key))


def txn_size(key_length: int, value_length: int, expected_revision: int) -> int:
    """The gRPC TxnRequest kube sends: create when ``expected_revision`` is 0, else an
    update that also reads the key back when the compare fails."""
    key = _field(key_length)
    compare = 2 + key + 1 + _varint(expected_revision)  # target MOD, key, mod_revision
    put = _field(_field(key + _field(value_length)))  # success: RequestOp{put}
    size = _field(compare) + put
    if expected_revision:
        size += _field(_field(key))  # failure: RequestOp{range}
    return size


def stored_length(obj: dict[str, Any]) -> int:
    """The encoded object as etcd holds it: kube never stores ``resourceVersion``, and
    its JSON encoder ends the document with a newline."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "resourceVersion" in meta:
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
        obj = {**obj, "metadata": meta}
    return len(object_json(obj)) + 1


def check_write_size(key: bytes, obj: dict[str, Any], expected_revision: int = 0) -> None:
    """Raise StorageError(REQUEST_TOO_LARGE) with etcd's text when etcd would refuse
    ``obj`` stored as JSON (LMDB's values; kube's for custom resources)."""
    key_length = etcd_key_length(key)
    # Most writes are far below the limits: orjson's length bounds the stored one (Go's
    # float forms are at most 4.2 times orjson's), so the exact encoding is rarely made.
    if _refusal(key_length, _FLOAT_GROWTH * len(orjson.dumps(obj)) + 1, expected_revision):
        check_value_size(key, stored_length(obj), expected_revision)


def check_value_size(key: bytes, value_length: int, expected_revision: int = 0) -> None:
    """The same check for the length of the value as kube would store it."""
    refusal = _refusal(etcd_key_length(key), value_length, expected_revision)
    if refusal:
        raise StorageError(REQUEST_TOO_LARGE, key, refusal)


_FLOAT_GROWTH = 5  # ``1e+20`` (5 bytes) is ``100000000000000000000`` (21) in Go's form


def check_send_size(key: bytes, etcd_key_length: int, value_length: int, expected: int) -> None:
    """The etcd backend's check: the gRPC send limit kube's etcd client enforces before a
    request leaves.  etcd itself judges its ``--max-request-bytes`` (which its operator may
    have raised) and answers in the words LMDB's check copies."""
    refusal = _send_refusal(txn_size(etcd_key_length, value_length, expected))
    if refusal:
        raise StorageError(REQUEST_TOO_LARGE, key, refusal)


def _send_refusal(txn: int) -> str:
    if txn <= MAX_GRPC_SEND_BYTES:
        return ""
    return (
        "rpc error: code = ResourceExhausted desc = trying to send message larger "
        f"than max ({txn} vs. {MAX_GRPC_SEND_BYTES})"
    )


def _refusal(key_length: int, value_length: int, expected_revision: int) -> str:
    """etcd's words refusing this transaction, or "" when it fits."""
    txn = txn_size(key_length, value_length, expected_revision)
    refusal = _send_refusal(txn)
    if not refusal and _field(txn) + _RAFT_HEADER > MAX_REQUEST_BYTES:
        return ETCD_TOO_LARGE
    return refusal
