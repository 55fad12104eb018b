"""SizeMonitor: etcd's database size for apiserver_storage_size_bytes, from a real etcd."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from platform_api.storage.etcd import EtcdClient
from platform_api.storage.etcd.monitor import SizeMonitor
from tests.storage.etcd_server import EtcdServer, start_etcd


async def _until(monitor: SizeMonitor, known: bool) -> None:
    for _ in range(100):
        if (monitor.size is not None) is known:
            return
        await deferLater(reactor, 0.05)  # type: ignore[arg-type]
    raise AssertionError(f"size still {monitor.size}")


@pytest_twisted.ensureDeferred
async def test_the_size_is_etcds_database_size(etcd: EtcdServer) -> None:
    c = EtcdClient([etcd.endpoint], reactor, timeout=5.0)  # type: ignore[arg-type]
    monitor = SizeMonitor(c, reactor, interval=0.1)  # type: ignore[arg-type]
    try:
        monitor.start()
        await _until(monitor, known=True)
        assert monitor.size == (await c.status()).db_size > 0
        assert monitor.cluster_id == "etcd-0"  # kube's label for its first etcd cluster
    finally:
        monitor.stop()
        c.close()


@pytest_twisted.ensureDeferred
async def test_no_size_while_etcd_does_not_answer_and_it_comes_back(tmp_path: Path) -> None:
    server = start_etcd(str(tmp_path), fsync=False)
    c = EtcdClient([server.endpoint], reactor, timeout=1.0)  # type: ignore[arg-type]
    monitor = SizeMonitor(c, reactor, interval=0.1)  # type: ignore[arg-type]
    try:
        monitor.start()
        await _until(monitor, known=True)
        server.stop()
        await _until(monitor, known=False)  # kube leaves the sample out
        server.start()
        await _until(monitor, known=True)  # the loop went on
    finally:
        monitor.stop()
        c.close()
        server.stop()
