"""etcd v3's gRPC messages (api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto), built at import.

Only the messages the client sends or reads, as a field table (codec/protodesc.py makes
the classes): names and numbers are the .proto files', so parsing a large range runs in C
and no protoc or generated code is needed at build time. Oneofs are declared so that
``mod_revision = 0`` in a Compare is still sent (etcd reads an absent key's revisions as 0).
"""

from __future__ import annotations

from typing import Any

from platform_api.codec.protodesc import (
    BOOL,
    BYTES,
    I64,
    REPEATED,
    STRING,
    U64,
    Field,
    file_descriptor,
    message_class,
    pool_of,
)

# message -> [(field, number, type or ".pkg.Message"/enum name, oneof or REPEATED or "")]
_MESSAGES: dict[str, list[Field]] = {
    "mvccpb.KeyValue": [
        ("key", 1, BYTES, ""),
        ("create_revision", 2, I64, ""),
        ("mod_revision", 3, I64, ""),
        ("version", 4, I64, ""),
        ("value", 5, BYTES, ""),
        ("lease", 6, I64, ""),
    ],
    "mvccpb.Event": [
        ("type", 1, ".mvccpb.Event.EventType", ""),
        ("kv", 2, ".mvccpb.KeyValue", ""),
        ("prev_kv", 3, ".mvccpb.KeyValue", ""),
    ],
    "etcdserverpb.ResponseHeader": [
        ("cluster_id", 1, U64, ""),
        ("member_id", 2, U64, ""),
        ("revision", 3, I64, ""),
        ("raft_term", 4, U64, ""),
    ],
    "etcdserverpb.RangeRequest": [
        ("key", 1, BYTES, ""),
        ("range_end", 2, BYTES, ""),
        ("limit", 3, I64, ""),
        ("revision", 4, I64, ""),
        ("serializable", 7, BOOL, ""),
        ("keys_only", 8, BOOL, ""),
        ("count_only", 9, BOOL, ""),
    ],
    "etcdserverpb.RangeResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("kvs", 2, ".mvccpb.KeyValue", REPEATED),
        ("more", 3, BOOL, ""),
        ("count", 4, I64, ""),
    ],
    "etcdserverpb.PutRequest": [
        ("key", 1, BYTES, ""),
        ("value", 2, BYTES, ""),
        ("lease", 3, I64, ""),
        ("prev_kv", 4, BOOL, ""),
    ],
    "etcdserverpb.PutResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("prev_kv", 2, ".mvccpb.KeyValue", ""),
    ],
    "etcdserverpb.DeleteRangeRequest": [
        ("key", 1, BYTES, ""),
        ("range_end", 2, BYTES, ""),
        ("prev_kv", 3, BOOL, ""),
    ],
    "etcdserverpb.DeleteRangeResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("deleted", 2, I64, ""),
        ("prev_kvs", 3, ".mvccpb.KeyValue", REPEATED),
    ],
    "etcdserverpb.RequestOp": [
        ("request_range", 1, ".etcdserverpb.RangeRequest", "request"),
        ("request_put", 2, ".etcdserverpb.PutRequest", "request"),
        ("request_delete_range", 3, ".etcdserverpb.DeleteRangeRequest", "request"),
    ],
    "etcdserverpb.ResponseOp": [
        ("response_range", 1, ".etcdserverpb.RangeResponse", "response"),
        ("response_put", 2, ".etcdserverpb.PutResponse", "response"),
        ("response_delete_range", 3, ".etcdserverpb.DeleteRangeResponse", "response"),
    ],
    "etcdserverpb.Compare": [
        ("result", 1, ".etcdserverpb.Compare.CompareResult", ""),
        ("target", 2, ".etcdserverpb.Compare.CompareTarget", ""),
        ("key", 3, BYTES, ""),
        ("version", 4, I64, "target_union"),
        ("create_revision", 5, I64, "target_union"),
        ("mod_revision", 6, I64, "target_union"),
        ("value", 7, BYTES, "target_union"),
        ("range_end", 64, BYTES, ""),
    ],
    "etcdserverpb.TxnRequest": [
        ("compare", 1, ".etcdserverpb.Compare", REPEATED),
        ("success", 2, ".etcdserverpb.RequestOp", REPEATED),
        ("failure", 3, ".etcdserverpb.RequestOp", REPEATED),
    ],
    "etcdserverpb.TxnResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("succeeded", 2, BOOL, ""),
        ("responses", 3, ".etcdserverpb.ResponseOp", REPEATED),
    ],
    "etcdserverpb.CompactionRequest": [("revision", 1, I64, ""), ("physical", 2, BOOL, "")],
    "etcdserverpb.CompactionResponse": [("header", 1, ".etcdserverpb.ResponseHeader", "")],
    "etcdserverpb.WatchRequest": [
        ("create_request", 1, ".etcdserverpb.WatchCreateRequest", "request_union"),
        ("cancel_request", 2, ".etcdserverpb.WatchCancelRequest", "request_union"),
        ("progress_request", 3, ".etcdserverpb.WatchProgressRequest", "request_union"),
    ],
    "etcdserverpb.WatchCreateRequest": [
        ("key", 1, BYTES, ""),
        ("range_end", 2, BYTES, ""),
        ("start_revision", 3, I64, ""),
        ("progress_notify", 4, BOOL, ""),
        ("prev_kv", 6, BOOL, ""),
        ("watch_id", 7, I64, ""),
        ("fragment", 8, BOOL, ""),
    ],
    "etcdserverpb.WatchCancelRequest": [("watch_id", 1, I64, "")],
    "etcdserverpb.WatchProgressRequest": [],
    "etcdserverpb.WatchResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("watch_id", 2, I64, ""),
        ("created", 3, BOOL, ""),
        ("canceled", 4, BOOL, ""),
        ("compact_revision", 5, I64, ""),
        ("cancel_reason", 6, STRING, ""),
        ("fragment", 7, BOOL, ""),
        ("events", 11, ".mvccpb.Event", REPEATED),
    ],
    "etcdserverpb.StatusRequest": [],
    "etcdserverpb.StatusResponse": [
        ("header", 1, ".etcdserverpb.ResponseHeader", ""),
        ("version", 2, STRING, ""),
        ("dbSize", 3, I64, ""),
        ("leader", 4, U64, ""),
        ("raftIndex", 5, U64, ""),
        ("raftTerm", 6, U64, ""),
        ("raftAppliedIndex", 7, U64, ""),
        ("errors", 8, STRING, REPEATED),
        ("dbSizeInUse", 9, I64, ""),
        ("isLearner", 10, BOOL, ""),
    ],
}

_ENUMS: dict[str, list[str]] = {
    "mvccpb.Event.EventType": ["PUT", "DELETE"],
    "etcdserverpb.Compare.CompareResult": ["EQUAL", "GREATER", "LESS", "NOT_EQUAL"],
    "etcdserverpb.Compare.CompareTarget": ["VERSION", "CREATE", "MOD", "VALUE", "LEASE"],
}


_POOL = pool_of(
    file_descriptor("mvccpb", _MESSAGES, _ENUMS),
    file_descriptor("etcdserverpb", _MESSAGES, _ENUMS, dependencies=["mvccpb"]),
)


def _class(name: str) -> Any:
    return message_class(_POOL, name)


KeyValue = _class("mvccpb.KeyValue")
Event = _class("mvccpb.Event")
RangeRequest = _class("etcdserverpb.RangeRequest")
RangeResponse = _class("etcdserverpb.RangeResponse")
PutRequest = _class("etcdserverpb.PutRequest")
PutResponse = _class("etcdserverpb.PutResponse")
DeleteRangeRequest = _class("etcdserverpb.DeleteRangeRequest")
DeleteRangeResponse = _class("etcdserverpb.DeleteRangeResponse")
RequestOp = _class("etcdserverpb.RequestOp")
Compare = _class("etcdserverpb.Compare")
TxnRequest = _class("etcdserverpb.TxnRequest")
TxnResponse = _class("etcdserverpb.TxnResponse")
CompactionRequest = _class("etcdserverpb.CompactionRequest")
CompactionResponse = _class("etcdserverpb.CompactionResponse")
WatchRequest = _class("etcdserverpb.WatchRequest")
WatchCreateRequest = _class("etcdserverpb.WatchCreateRequest")
WatchProgressRequest = _class("etcdserverpb.WatchProgressRequest")
WatchCancelRequest = _class("etcdserverpb.WatchCancelRequest")
WatchResponse = _class("etcdserverpb.WatchResponse")
StatusRequest = _class("etcdserverpb.StatusRequest")
StatusResponse = _class("etcdserverpb.StatusResponse")

# method path -> (request class, response class); unary unless noted.
UNARY = {
    "/etcdserverpb.KV/Range": RangeResponse,
    "/etcdserverpb.KV/Put": PutResponse,
    "/etcdserverpb.KV/DeleteRange": DeleteRangeResponse,
    "/etcdserverpb.KV/Txn": TxnResponse,
    "/etcdserverpb.KV/Compact": CompactionResponse,
    "/etcdserverpb.Maintenance/Status": StatusResponse,
}
WATCH = "/etcdserverpb.Watch/Watch"  # bidirectional stream of WatchRequest / WatchResponse
