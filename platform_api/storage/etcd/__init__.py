"""etcd v3 client for the etcd storage backend (issue 13): see client.py.

The names below are imported on first use (PEP 562): a server on LMDB imports
``layout`` (kube's key layout, for its storage paths) and nothing of the client, whose
gRPC and Protobuf modules cost ~40 ms of every start.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "proto": "proto",
    "http2": "http2",
    "EtcdClient": "client",
    "Compacted": "errors",
    "EtcdError": "errors",
    "FutureRevision": "errors",
    "NoSpace": "errors",
    "RequestTooLarge": "errors",
    "Unavailable": "errors",
    "WatchCanceled": "errors",
    "CASResult": "kv",
    "Compare": "kv",
    "KeyValue": "kv",
    "RangeResult": "kv",
    "Status": "kv",
    "delete_op": "kv",
    "prefix_end": "kv",
    "put_op": "kv",
    "range_op": "kv",
    "TLSConfig": "transport",
    "Watch": "watch",
    "WatchEvent": "watch",
    "WatchResponse": "watch",
}

__all__ = [  # noqa: RUF022 (grouped as _HOMES)
    "EtcdClient",
    "Compacted",
    "EtcdError",
    "FutureRevision",
    "NoSpace",
    "RequestTooLarge",
    "Unavailable",
    "WatchCanceled",
    "CASResult",
    "Compare",
    "KeyValue",
    "RangeResult",
    "Status",
    "delete_op",
    "prefix_end",
    "put_op",
    "range_op",
    "TLSConfig",
    "Watch",
    "WatchEvent",
    "WatchResponse",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{home}")
    value = module if home == name else getattr(module, name)
    globals()[name] = value
    return value
