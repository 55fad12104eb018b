"""``--storage-backend`` and kube-apiserver's ``--etcd-*`` flags: names, checks, errors.

``config.from_flags`` calls ``from_flags``; storagebackend.py opens what they name.
LMDB stays the default: a server that needs nothing else to run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from platform_api.apiserver.flagvalues import ConfigError, parse_list
from platform_api.storage import mediatypes
from platform_api.storage.etcd.endpoint import Target

Given = Callable[[str], str | None]
LMDB, ETCD3 = "lmdb", "etcd3"
BACKENDS = (LMDB, ETCD3)

# (flag, default shown in --help, description), appended to serverflags.FLAGS.
STORAGE_FLAGS: list[tuple[str, str, str]] = [
    (
        "storage-backend",
        LMDB,
        "The storage backend for persistence. Options: 'lmdb' (embedded, under --data-dir), "
        "'etcd3' (--etcd-servers; several servers may share it).",
    ),
    (
        "etcd-servers",
        "",
        "List of etcd servers to connect with (scheme://ip:port), comma separated.",
    ),
    ("etcd-prefix", "/registry", "The prefix to prepend to all resource paths in etcd."),
    ("etcd-cafile", "", "SSL Certificate Authority file used to secure etcd communication."),
    ("etcd-certfile", "", "SSL certification file used to secure etcd communication."),
    ("etcd-keyfile", "", "SSL key file used to secure etcd communication."),
    (
        "storage-media-type",
        mediatypes.PROTOBUF,
        "The media type to use to store objects in storage. Some resources or storage "
        "backends may only support a specific media type and will ignore this setting. "
        f"Supported media types: [{', '.join(mediatypes.ALLOWED)}]",
    ),
]


@dataclass
class StorageOptions:
    backend: str = LMDB
    etcd_servers: tuple[str, ...] = ()
    etcd_prefix: str = "/registry"
    etcd_cafile: str = ""
    etcd_certfile: str = ""
    etcd_keyfile: str = ""
    media_type: str = mediatypes.PROTOBUF  # etcd's values (LMDB holds JSON)


def from_flags(given: Given) -> StorageOptions:
    out = StorageOptions()
    backend = given("storage-backend")
    if backend is not None:
        if backend not in BACKENDS:
            raise ConfigError(
                f"--storage-backend invalid, allowed values: {', '.join(BACKENDS)}. If not "
                f"specified, it will default to '{LMDB}'"
            )
        out.backend = backend
    if given("etcd-servers"):
        out.etcd_servers = tuple(parse_list(str(given("etcd-servers"))))
        for endpoint in out.etcd_servers:
            try:
                Target.parse(endpoint)
            except ValueError as e:
                raise ConfigError(f"--etcd-servers: {e}") from None
    if given("etcd-prefix") is not None:
        out.etcd_prefix = str(given("etcd-prefix")) or "/registry"
    for name in ("etcd-cafile", "etcd-certfile", "etcd-keyfile"):
        path = given(name) or ""
        if path and not os.path.isfile(path):
            raise ConfigError(f"--{name}: {path}: no such file")
        setattr(out, name.replace("-", "_"), path)
    media_type = given("storage-media-type")
    if media_type:
        chosen = mediatypes.canonical(str(media_type))
        if chosen is None:
            raise ConfigError(
                f'--storage-media-type "{media_type}" invalid, allowed values: '
                + ", ".join(mediatypes.ALLOWED)
            )
        out.media_type = chosen
    if out.backend == ETCD3 and not out.etcd_servers:
        raise ConfigError("--etcd-servers must be specified")
    return out
