"""Encryption at rest: what each provider adds to one Secret's write and read, in process.

    python benchmarks/encryptionbench.py [--seconds 0.5] [--size 512]

The Secret is a typical one (metadata, managedFields, a few data keys; ``--size`` bytes
of data).  For every provider: "write" is ``to_storage`` (what the LMDB writer thread
adds per write), "read" is ``from_storage`` (what a GET, a list item or a watch replay
adds), both through the server's router (resource lookup and metrics included); and
"get" is a whole LMDBStorage.get() of the stored value, against the unencrypted one.
kms v2 runs against the sample plugin (webhooks/kms) on a unix socket in this process:
a write derives a per-write AES-GCM key by HKDF from the seed the plugin encrypted once;
a read decrypts its seed through the plugin once, then from the cache.
"""

from __future__ import annotations

import argparse
import base64
import os
import pathlib
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import orjson
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from twisted.internet.defer import Deferred  # noqa: E402

from platform_api.storage.encryption.dynamic import EncryptionAtRest  # noqa: E402
from platform_api.storage.lmdb_store import LMDBStorage, open_environment  # noqa: E402
from webhooks.kms.plugin import serve  # noqa: E402

KEY = b"/core/secrets/default\x00db-credentials"


def secret(size: int) -> bytes:
    data = {f"key{i}": base64.b64encode(os.urandom(size // 4)).decode() for i in range(4)}
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "db-credentials",
                "namespace": "default",
                "uid": "8d3f3a52-5d0e-4a59-9d0e-1f2b5d7c9e10",
                "resourceVersion": "12345",
                "creationTimestamp": "2026-11-23T17:00:00Z",
                "managedFields": [
                    {
                        "manager": "kubectl-create",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": "2026-11-23T17:00:00Z",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {f"f:key{i}": {} for i in range(4)}, "f:type": {}},
                    }
                ],
            },
            "data": data,
            "type": "Opaque",
        }
    )


def per_call(fn: Callable[[], Any], seconds: float) -> float:
    """Microseconds per call: as many calls as fit in ``seconds``, best of three rounds."""
    best = float("inf")
    for _ in range(3):
        n, start = 0, time.perf_counter()
        while True:
            for _ in range(100):
                fn()
            n += 100
            elapsed = time.perf_counter() - start
            if elapsed >= seconds / 3:
                break
        best = min(best, elapsed / n * 1e6)
    return best


def provider_configs(socket: str) -> dict[str, dict[str, Any]]:
    def local(kind: str, size: int) -> dict[str, Any]:
        secret_key = base64.b64encode(os.urandom(size)).decode()
        return {kind: {"keys": [{"name": "k1", "secret": secret_key}]}}

    return {
        "identity": {"identity": {}},
        "aescbc": local("aescbc", 32),
        "aesgcm": local("aesgcm", 32),
        "secretbox": local("secretbox", 32),
        "kms v2": {"kms": {"apiVersion": "v2", "name": "bench", "endpoint": f"unix://{socket}"}},
    }


def write_config(path: pathlib.Path, provider: dict[str, Any]) -> str:
    doc = {
        "apiVersion": "apiserver.config.platform.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": ["secrets"], "providers": [provider]}],
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def inline(work: Callable[[], Any]) -> Deferred[Any]:
    d: Deferred[Any] = Deferred()
    d.callback(work())
    return d


def get_cost(tmp: pathlib.Path, name: str, transformer: Any, plain: bytes, seconds: float) -> float:
    env = open_environment(str(tmp / f"db-{name.replace(' ', '')}"), 64 * 2**20)
    storage = LMDBStorage(env, inline, transformer=transformer)
    storage.create(KEY, orjson.loads(plain))
    return per_call(lambda: storage.get(KEY), seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per measurement")
    parser.add_argument("--size", type=int, default=512, help="bytes of Secret data")
    args = parser.parse_args()
    plain = secret(args.size)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = pathlib.Path(tmpdir)
        key_file = tmp / "kek"
        key_file.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
        socket = str(tmp / "kms.sock")
        plugin = serve(socket, str(key_file))
        try:
            baseline = get_cost(tmp, "none", None, plain, args.seconds)
            print(
                f"Secret JSON: {len(plain)} bytes; LMDBStorage.get unencrypted: {baseline:.1f} µs"
            )
            print(
                f"{'provider':<10} {'write µs':>9} {'read µs':>9} {'get µs':>9} "
                f"{'get +µs':>8} {'stored B':>9}"
            )
            for name, provider in provider_configs(socket).items():
                path = write_config(tmp / "enc.yaml", provider)
                enc = EncryptionAtRest(path, False, None)
                stored = enc.to_storage(KEY, plain)
                assert enc.from_storage(KEY, stored)[0] == plain
                write = per_call(lambda e=enc: e.to_storage(KEY, plain), args.seconds)
                read = per_call(lambda e=enc, s=stored: e.from_storage(KEY, s), args.seconds)
                get = get_cost(tmp, name, enc, plain, args.seconds)
                print(
                    f"{name:<10} {write:>9.1f} {read:>9.1f} {get:>9.1f} "
                    f"{get - baseline:>8.1f} {len(stored):>9}"
                )
                enc.stop()
        finally:
            plugin.stop(0)


if __name__ == "__main__":
    main()
