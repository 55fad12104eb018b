"""The etcd store's calls at start, before the reactor runs: they block, and the first
waits for an etcd started beside the server, as kube's start waits out its dial timeout."""

from __future__ import annotations

import time
from collections.abc import Callable

from twisted.logger import Logger

from platform_api.storage.etcd import proto
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.errors import EtcdError, Unavailable
from platform_api.storage.etcd.kv import RangeResult, Status
from platform_api.storage.interface import UNREACHABLE, StorageError

log = Logger()

# kube-apiserver's etcd dial timeout: a start waits this long for etcd, then fails.
START_WAIT = 20.0


def status_blocking(
    client: EtcdClient,
    wait: float = START_WAIT,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Status:
    """etcd's status (its version), waited for: only at start.  etcd started beside the
    server may answer a moment later, so a start retries for ``wait`` seconds, as kube's
    waits out its dial timeout before it fails ("context deadline exceeded")."""
    path = "/etcdserverpb.Maintenance/Status"
    deadline, waited = clock() + wait, False
    while True:
        try:
            return Status.decode(client.transport.call_blocking(path, proto.StatusRequest()))
        except Unavailable as e:
            if clock() >= deadline:
                raise StorageError(UNREACHABLE, b"", e.message) from None
            if not waited:
                log.warn("waiting up to {wait:g}s for etcd: {error}", wait=wait, error=e.message)
                waited = True
            sleep(0.5)
        except EtcdError as e:
            raise StorageError(UNREACHABLE, b"", e.message) from None


def range_blocking(
    client: EtcdClient, key: bytes, range_end: bytes, limit: int, revision: int
) -> RangeResult:
    """One Range call, waited for: only at start, before the reactor serves anything."""
    request = proto.RangeRequest(key=key, range_end=range_end, limit=limit, revision=revision)
    try:
        return RangeResult.decode(client.transport.call_blocking("/etcdserverpb.KV/Range", request))
    except EtcdError as e:
        raise StorageError(UNREACHABLE, key, e.message) from None
