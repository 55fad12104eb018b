"""KMS v2 with the sample plugin (a real gRPC server on a unix socket, in this process)."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.storage.encryption import kmsproto as pb
from platform_api.storage.encryption.dynamic import EncryptionAtRest
from platform_api.storage.encryption.kms import unseal
from platform_api.storage.transformer import TransformError
from webhooks.kms.plugin import key_id, serve

from .helpers import rule, write_config

KEY = b"/core/secrets/default/db"
DATA = b'{"kind":"Secret","data":{"token":"c2VjcmV0"}}'


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[dict[str, Any]]:
    key_file = tmp_path / "kek"
    first = os.urandom(32)
    key_file.write_text(base64.b64encode(first).decode() + "\n")
    socket = str(tmp_path / "kms.sock")
    server = serve(socket, str(key_file))
    yield {"socket": socket, "key_file": key_file, "first": first, "server": server}
    server.stop(0)


def kms_config(tmp_path: Path, socket: str, *extra: dict[str, Any]) -> str:
    kms = {"apiVersion": "v2", "name": "local", "endpoint": f"unix://{socket}", "timeout": "2s"}
    return write_config(tmp_path / "enc.yaml", rule(["secrets"], {"kms": kms}, *extra))


def test_envelope_layout_and_round_trip(tmp_path: Path, plugin: dict[str, Any]) -> None:
    enc = EncryptionAtRest(kms_config(tmp_path, plugin["socket"]), False, reactor)
    assert enc.health() is None
    assert [name for name, _ in enc.health_checks()] == ["kms-providers"]
    stored = enc.to_storage(KEY, DATA)
    prefix = b"k8s:enc:kms:v2:local:"
    assert stored.startswith(prefix) and b"c2VjcmV0" not in stored
    obj = pb.EncryptedObject.decode(stored[len(prefix) :])
    assert obj.key_id == key_id(plugin["first"])
    assert obj.encrypted_dek_source_type == pb.HKDF_SHA256_XNONCE_AES_GCM_SEED
    state = enc.current.kms[0].state
    assert state is not None and len(state.seed) == 32
    assert unseal(state.seed, KEY, obj.encrypted_data) == DATA  # HKDF(seed, info) AES-GCM
    assert enc.from_storage(KEY, stored) == (DATA, False)
    # Another process (a restart): a new seed for writes, the old one decrypted by the plugin.
    restarted = EncryptionAtRest(kms_config(tmp_path, plugin["socket"]), False, reactor)
    assert restarted.from_storage(KEY, stored) == (DATA, False)
    with pytest.raises(TransformError, match=r"cipher: message authentication failed"):
        restarted.from_storage(b"/core/secrets/default/other", stored)
    enc.stop()
    restarted.stop()


def test_key_id_rotation_noticed_from_status(tmp_path: Path, plugin: dict[str, Any]) -> None:
    enc = EncryptionAtRest(kms_config(tmp_path, plugin["socket"]), False, reactor)
    old = enc.to_storage(KEY, DATA)
    second = os.urandom(32)
    keys = [second, plugin["first"]]
    plugin["key_file"].write_text("".join(base64.b64encode(k).decode() + "\n" for k in keys))
    enc.current.kms[0].prime()  # the next Status: a new key ID, so a new seed
    assert enc.current.kms[0].state.key_id == key_id(second)
    assert enc.from_storage(KEY, old) == (DATA, True)  # old key ID: stale
    new = enc.to_storage(KEY, DATA)
    assert enc.from_storage(KEY, new) == (DATA, False)
    enc.stop()


@pytest_twisted.ensureDeferred
async def test_async_probe_and_health(tmp_path: Path, plugin: dict[str, Any]) -> None:
    enc = EncryptionAtRest(kms_config(tmp_path, plugin["socket"]), False, reactor)
    envelope = enc.current.kms[0]
    await envelope.probe()
    assert envelope.last_error is None
    plugin["server"].stop(0).wait()
    await envelope.probe()
    assert envelope.last_error is not None
    assert envelope.last_error.startswith(
        "failed to perform status section of the healthz check for KMS Provider local, "
        "error: rpc error: code = Unavailable desc = "
    )
    assert enc.health() == f"kms-provider-0: {envelope.last_error}"
    enc.stop()


def test_plugin_down_at_start(tmp_path: Path) -> None:
    enc = EncryptionAtRest(kms_config(tmp_path, str(tmp_path / "none.sock")), False, reactor)
    assert enc.health() is not None
    with pytest.raises(TransformError, match=r"^got unexpected nil transformer$"):
        enc.to_storage(KEY, DATA)
    enc.stop()


def test_identity_first_reads_kms_values(tmp_path: Path, plugin: dict[str, Any]) -> None:
    """Decrypting: identity first writes plaintext, the kms provider still reads."""
    enc = EncryptionAtRest(kms_config(tmp_path, plugin["socket"]), False, reactor)
    stored = enc.to_storage(KEY, DATA)
    kms = {"apiVersion": "v2", "name": "local", "endpoint": f"unix://{plugin['socket']}"}
    path = write_config(tmp_path / "dec.yaml", rule(["secrets"], {"identity": {}}, {"kms": kms}))
    dec = EncryptionAtRest(path, False, reactor)
    assert dec.to_storage(KEY, DATA) == DATA
    assert dec.from_storage(KEY, stored) == (DATA, True)
    enc.stop()
    dec.stop()
