"""The bytes a server's storage holds for an object, read around the server, so that the
cases about data at rest (encryption) check either backend: LMDB's file, or the etcd of a
PLATFORM_E2E_ETCD run through etcd's JSON gateway."""

from __future__ import annotations

import base64
import json
import urllib.request
from pathlib import Path
from typing import Any

import lmdb

from tests.e2e.conftest import E2E_ETCD, e2e_etcd, registry_prefix

_REVISION_HEADER = 8  # LMDB's objects are stored behind their revision


def stored(
    data_dir: Path, resource: str, namespace: str, name: str
) -> tuple[bytes | None, list[bytes]]:
    """A core object's stored value (None when there is none) and the values it had before
    that the storage still holds: on LMDB every change-log record, on etcd the key's
    earlier versions back to its creation or the last compaction."""
    if E2E_ETCD:
        return _on_etcd(f"{registry_prefix(data_dir)}/{resource}/{namespace}/{name}")
    env = lmdb.open(str(data_dir / "db"), max_dbs=4, readonly=True, lock=True)
    try:
        with env.begin() as txn:
            key = f"/core/{resource}/{namespace}/{name}".encode()
            value = txn.get(key, db=env.open_db(b"objects", txn=txn))
            log = [v for _, v in txn.cursor(db=env.open_db(b"log", txn=txn))]
    finally:
        env.close()
    return (value[_REVISION_HEADER:] if value else None), log


def _on_etcd(key: str) -> tuple[bytes | None, list[bytes]]:
    found = _range(key)
    if found is None:
        return None, []
    earlier: list[bytes] = []
    kv = found
    while int(kv.get("version", 1)) > 1:
        before = _range(key, revision=int(kv["mod_revision"]) - 1)
        if before is None:  # compacted away
            break
        earlier.append(base64.b64decode(before.get("value", "")))
        kv = before
    return base64.b64decode(found.get("value", "")), earlier


def _range(key: str, revision: int = 0) -> dict[str, Any] | None:
    body: dict[str, Any] = {"key": base64.b64encode(key.encode()).decode()}
    if revision:
        body["revision"] = revision
    request = urllib.request.Request(
        f"{e2e_etcd()}/v3/kv/range", data=json.dumps(body).encode(), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            kvs = json.load(answer).get("kvs", [])
    except urllib.error.HTTPError as e:  # a compacted revision
        if b"compacted" in e.read():
            return None
        raise
    return kvs[0] if kvs else None
