"""--storage-backend and the --etcd-* flags: kube's names, defaults and start-up errors."""

from __future__ import annotations

import pytest

from platform_api.apiserver.config import ConfigError, from_flags


def test_lmdb_is_the_default() -> None:
    storage = from_flags({}).storage
    assert (storage.backend, storage.etcd_servers, storage.etcd_prefix) == ("lmdb", (), "/registry")


def test_etcd3_with_servers_and_a_prefix() -> None:
    storage = from_flags(
        {
            "storage-backend": "etcd3",
            "etcd-servers": "http://a:2379,https://b:2379",
            "etcd-prefix": "/tenant",
        }
    ).storage
    assert storage.backend == "etcd3"
    assert storage.etcd_servers == ("http://a:2379", "https://b:2379")
    assert storage.etcd_prefix == "/tenant"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"storage-backend": "etcd2"},
            "--storage-backend invalid, allowed values: lmdb, etcd3. If not specified, it will "
            "default to 'lmdb'",
        ),
        ({"storage-backend": "etcd3"}, "--etcd-servers must be specified"),
        (
            {"storage-backend": "etcd3", "etcd-servers": "http://a:2379,http://b:99999"},
            "--etcd-servers: http://b:99999: Port out of range 0-65535",
        ),
        (
            {"storage-backend": "etcd3", "etcd-servers": "a:port"},
            "--etcd-servers: a:port: Port could not be cast to integer value as 'port'",
        ),
        (
            {"storage-backend": "etcd3", "etcd-servers": "unix:///run/etcd.sock"},
            '--etcd-servers: unix:///run/etcd.sock: unsupported scheme "unix" (http or https)',
        ),
        (
            {"storage-backend": "etcd3", "etcd-servers": "http://a:1", "etcd-cafile": "/nope"},
            "--etcd-cafile: /nope: no such file",
        ),
        (
            {"storage-media-type": "application/cbor"},
            '--storage-media-type "application/cbor" invalid, allowed values: '
            "application/json, application/vnd.platform.protobuf, application/yaml",
        ),
    ],
)
def test_refused_at_start(flags: dict[str, str | None], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        from_flags(flags)
    assert str(e.value) == message


def test_storage_media_type_is_protobuf_by_default_as_in_kube() -> None:
    assert from_flags({}).storage.media_type == "application/vnd.platform.protobuf"
    chosen = [
        from_flags({"storage-media-type": value}).storage.media_type
        for value in ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
    ]
    assert chosen == ["application/json", "application/yaml", "application/vnd.platform.protobuf"]
