"""Copy every object between an LMDB data directory and etcd, either way.

    python -m platform_api.storage.migrate --from /path/to/data-dir --to http://127.0.0.1:2379
    python -m platform_api.storage.migrate --from http://127.0.0.1:2379 --to /path/to/data-dir

(``scripts/migrate-storage`` runs it in the project's virtualenv.)  Stop the servers first.
Objects keep their uid, names, labels, owners and every other field; only the
resourceVersions are the target's own (each store numbers its writes).  An object the
target already has is left alone and reported, so a copy can be re-run after a failure.
Values are copied as they are: with encryption at rest, give both servers the same
``--encryption-provider-config``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import lmdb
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import react

from platform_api.apiserver.enablement import keyed_resources
from platform_api.apiserver.processlock import ProcessLock
from platform_api.codec.goshape import set_revision
from platform_api.gotext import object_json
from platform_api.privatefiles import private_dir
from platform_api.storage import mediatypes
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.endpoint import Target
from platform_api.storage.etcd.errors import EtcdError
from platform_api.storage.etcd.kv import prefix_end
from platform_api.storage.etcd.layout import DEFAULT_PREFIX, KeyLayout
from platform_api.storage.lmdb_commit import REV
from platform_api.storage.lmdb_store import open_environment

MAP_SIZE = 8 * 2**30
ENCRYPTED = b"k8s:enc:"
PAGE = 1000  # keys per etcd range: one unpaged range of a large cluster overruns a message
# A server on a data directory holds its leader lock while it runs; one starting waits on
# its bootstrap lock (apiserver/service.py).
_SERVER_LOCKS = ("bootstrap.lock", "leader.lock")


class MigrationError(Exception):
    """Why nothing more was copied: said in one line, and the command exits 1."""


def layout(prefix: str) -> KeyLayout:
    return KeyLayout(prefix, keyed_resources())


def _decode(name: str, value: bytes, typed: tuple[str, str] | None = None) -> dict[str, Any]:
    try:
        return mediatypes.decode(value, typed=typed)
    except ValueError as e:
        raise MigrationError(f"{name}: not an object ({e})") from None


def _without_revision(name: str, value: bytes) -> bytes:
    if value.startswith(ENCRYPTED):
        return value  # sealed with the registry key as its authenticated data: portable
    obj = _decode(name, value)
    obj.get("metadata", {}).pop("resourceVersion", None)
    return mediatypes.encode(obj, mediatypes.PROTOBUF)  # as the server writes by default


def read_lmdb(data_dir: str) -> list[tuple[bytes, bytes]]:
    """(registry key, stored value) of every object, in key order: one snapshot."""
    if not os.path.isfile(os.path.join(data_dir, "db", "data.mdb")):
        raise MigrationError(f"{data_dir}: not a data directory (it has no db/data.mdb)")
    env = open_environment(os.path.join(data_dir, "db"), MAP_SIZE)
    try:
        objects = env.open_db(b"objects")
        with env.begin() as txn:
            return [(bytes(k), bytes(v[REV.size :])) for k, v in txn.cursor(db=objects)]
    finally:
        env.close()


@contextlib.contextmanager
def no_server_on(data_dir: str, reactor: Any) -> Iterator[None]:
    """Hold the locks of a server on ``data_dir`` while it is written: one running there
    would serve from indexes that never see the copy (MigrationError), and one starting
    meanwhile waits for the copy to be whole."""
    run_dir = private_dir(os.path.join(private_dir(data_dir, ours=False), "run"))
    with contextlib.ExitStack() as held:
        for name in _SERVER_LOCKS:
            lock = ProcessLock(os.path.join(run_dir, name), reactor)
            if not lock.try_acquire():
                raise MigrationError(f"{data_dir}: a server is running on it; stop it first")
            held.callback(lock.release)
        yield


def write_lmdb(data_dir: str, items: list[tuple[bytes, bytes]], keys: KeyLayout) -> tuple[int, int]:
    """Store ``items`` as new objects, in one transaction (all or none); returns (copied,
    skipped).  Call it under ``no_server_on``."""
    env = open_environment(os.path.join(data_dir, "db"), MAP_SIZE)
    copied = skipped = 0
    try:
        objects, meta = env.open_db(b"objects"), env.open_db(b"meta")
        with env.begin(write=True) as txn:
            raw = txn.get(b"rev", db=meta)
            revision = REV.unpack(raw)[0] if raw else 0
            for key, value in items:
                if txn.get(key, db=objects) is not None:
                    skipped += 1
                    continue
                name = keys.etcd_key(key).decode(errors="replace")
                if value.startswith(ENCRYPTED):
                    raise MigrationError(
                        f"{name}: encrypted values are copied from LMDB to etcd only"
                    )
                revision += 1
                obj = _decode(name, value, keys.type_of(key))  # Protobuf, JSON or YAML
                obj.setdefault("metadata", {})
                set_revision(obj, str(revision))
                txn.put(key, REV.pack(revision) + object_json(obj), db=objects)
                copied += 1
            txn.put(b"rev", REV.pack(revision), db=meta)
            # Nothing before the copy can be watched or listed from: the log starts here.
            txn.put(b"compacted", REV.pack(revision), db=meta)
    finally:
        env.close()
    return copied, skipped


async def read_etcd(client: EtcdClient, keys: KeyLayout) -> list[tuple[bytes, bytes]]:
    """(registry key, value) of every object under the prefix, paged at one revision."""
    start, end, revision = keys.root, prefix_end(keys.root), 0
    out = []
    while True:
        result = await client.range(start, end, limit=PAGE, revision=revision)
        revision = revision or result.revision
        for kv in result.kvs:
            key = keys.registry_key(kv.key)
            if key is not None:
                out.append((key, kv.value))
        if not result.more:
            return out
        start = result.kvs[-1].key + b"\x00"


async def write_etcd(
    client: EtcdClient, keys: KeyLayout, items: list[tuple[bytes, bytes]]
) -> tuple[int, int]:
    """Create each object its own key (etcd has no transaction that large): a copy cut
    short says how far it got, and running it again copies the rest."""
    copied = skipped = 0
    for key, stored in items:
        etcd_key = keys.etcd_key(key)
        try:
            value = _without_revision(etcd_key.decode(errors="replace"), stored)
            result = await client.create(etcd_key, value)
        except (EtcdError, MigrationError) as e:
            raise MigrationError(
                f"{e} ({copied} objects copied before it; running the copy again copies the rest)"
            ) from None
        if result.succeeded:
            copied += 1
        else:
            skipped += 1
    return copied, skipped


def _is_etcd(place: str) -> bool:
    return place.startswith(("http://", "https://"))


async def migrate(reactor: Any, source: str, target: str, prefix: str) -> tuple[int, int]:
    keys = layout(prefix)
    endpoint = source if _is_etcd(source) else target
    client = EtcdClient(endpoint.split(","), reactor)
    try:
        if _is_etcd(source):
            items = await read_etcd(client, keys)  # first: etcd unreachable leaves no dir
            with no_server_on(target, reactor):
                return write_lmdb(target, items, keys)
        return await write_etcd(client, keys, read_lmdb(source))
    finally:
        client.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", required=True, help="data dir or etcd URL(s)")
    parser.add_argument("--to", dest="target", required=True, help="data dir or etcd URL(s)")
    parser.add_argument("--etcd-prefix", default=DEFAULT_PREFIX)
    args = parser.parse_args(argv)
    if _is_etcd(args.source) == _is_etcd(args.target):
        parser.error("one side must be an LMDB data directory, the other etcd URL(s)")
    for endpoint in (args.source if _is_etcd(args.source) else args.target).split(","):
        try:
            Target.parse(endpoint)
        except ValueError as e:
            parser.error(str(e))

    async def run(reactor: Any) -> None:
        try:
            copied, skipped = await migrate(reactor, args.source, args.target, args.etcd_prefix)
        except (MigrationError, EtcdError, lmdb.Error, OSError) as e:
            raise SystemExit(f"migrate-storage: {e}") from None  # react exits 1 with it
        print(f"copied {copied} objects; {skipped} already present, left as they are")

    react(lambda reactor: ensureDeferred(run(reactor)))


if __name__ == "__main__":
    main(sys.argv[1:])
