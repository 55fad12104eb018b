"""etcd v3 client for the etcd storage backend (issue 13): see client.py."""

from platform_api.storage.etcd import proto
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.errors import (
    Compacted,
    EtcdError,
    FutureRevision,
    RequestTooLarge,
    Unavailable,
    WatchCanceled,
)
from platform_api.storage.etcd.kv import (
    CASResult,
    Compare,
    KeyValue,
    RangeResult,
    Status,
    delete_op,
    prefix_end,
    put_op,
    range_op,
)
from platform_api.storage.etcd.transport import TLSConfig
from platform_api.storage.etcd.watch import Watch, WatchEvent, WatchResponse

__all__ = [
    "CASResult",
    "Compacted",
    "Compare",
    "EtcdClient",
    "EtcdError",
    "FutureRevision",
    "KeyValue",
    "RangeResult",
    "RequestTooLarge",
    "Status",
    "TLSConfig",
    "Unavailable",
    "Watch",
    "WatchCanceled",
    "WatchEvent",
    "WatchResponse",
    "delete_op",
    "prefix_end",
    "proto",
    "put_op",
    "range_op",
]
