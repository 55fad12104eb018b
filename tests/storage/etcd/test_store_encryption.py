"""Encryption at rest on etcd authenticates each value by its etcd key, as kube-apiserver
does, so either server reads the other's AES-GCM (and KMS v2) values on one etcd."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from twisted.internet import reactor

from platform_api.storage import mediatypes
from platform_api.storage.encryption.config import load
from platform_api.storage.encryption.router import ResourceTransformers
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.transformer import StaleStored
from tests.storage.encryption.helpers import keys, rule, write_config
from tests.storage.etcd_server import EtcdServer

_names = itertools.count()
PREFIX = b"k8s:enc:aesgcm:v1:k1:"
NONCE = 12


@pytest.fixture
def secret_key() -> bytes:
    return f"/core/secrets/enc/s{next(_names)}".encode()


@pytest.fixture
def aesgcm(tmp_path: Path) -> tuple[ResourceTransformers, bytes]:
    """Transformers with one AES-GCM key for Secrets, and that key's bytes."""
    provider = keys("k1")
    path = write_config(tmp_path / "enc.yaml", rule(["secrets"], {"aesgcm": provider}))
    return ResourceTransformers(load(path), None), base64.b64decode(provider["keys"][0]["secret"])


@pytest.fixture
def storage(etcd: EtcdServer, aesgcm: tuple[ResourceTransformers, bytes]) -> Iterator[EtcdStorage]:
    client = EtcdClient([etcd.endpoint], reactor)
    layout = KeyLayout("/registry", [("", "secrets")])
    made = EtcdStorage(client, layout, reactor, transformer=aesgcm[0])
    made.load()
    made.start()
    yield made
    made.stop()
    client.close()


def secret(name: str, password: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "enc", "uid": "u-1"}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": {"p": password}}


def opened(value: bytes, key: bytes, context: bytes) -> dict[str, Any]:
    """A stored value decrypted by hand, as kube-apiserver's aesgcm provider does."""
    assert value.startswith(PREFIX)
    sealed = value[len(PREFIX) :]
    plain = AESGCM(key).decrypt(sealed[:NONCE], sealed[NONCE:], context)
    return mediatypes.decode(plain)


@pytest_twisted.ensureDeferred
async def test_values_are_authenticated_by_their_etcd_key(
    storage: EtcdStorage, aesgcm: tuple[ResourceTransformers, bytes], secret_key: bytes
) -> None:
    name = secret_key.rsplit(b"/", 1)[1].decode()
    await storage.create(secret_key, secret(name, "aHVudGVyMg=="))
    etcd_key = storage.layout.etcd_key(secret_key)
    assert etcd_key == f"/registry/secrets/enc/{name}".encode()
    kv = await storage.client.get(etcd_key)
    assert kv is not None
    assert opened(kv.value, aesgcm[1], etcd_key)["data"] == {"p": "aHVudGVyMg=="}
    with pytest.raises(InvalidTag):  # not the registry key, which kube knows nothing of
        opened(kv.value, aesgcm[1], secret_key)


@pytest_twisted.ensureDeferred
async def test_a_value_authenticated_by_the_registry_key_is_read_and_rewritten(
    storage: EtcdStorage, aesgcm: tuple[ResourceTransformers, bytes], secret_key: bytes
) -> None:
    """What releases before 2026-12-05 wrote: it reads, as stale, and its next write,
    even an unchanged one, stores it as kube-apiserver can read it."""
    name = secret_key.rsplit(b"/", 1)[1].decode()
    transformer, key = aesgcm
    plain = mediatypes.encode(secret(name, "b2xk"), mediatypes.PROTOBUF)
    etcd_key = storage.layout.etcd_key(secret_key)
    put = await storage.client.put(etcd_key, transformer.to_storage(secret_key, plain))
    await storage.cache.wait_for(put.revision)
    old = storage.get(secret_key)
    assert isinstance(old, StaleStored) and old.object["data"] == {"p": "b2xk"}
    rewritten = await storage.guaranteed_update(secret_key, lambda obj, _: obj)
    assert rewritten.revision > put.revision
    kv = await storage.client.get(etcd_key)
    assert kv is not None and opened(kv.value, key, etcd_key)["data"] == {"p": "b2xk"}
    assert type(storage.get(secret_key)) is not StaleStored
