"""Real etcd processes for the etcd client tests: one plain, one TLS, per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.storage.etcd_server import EtcdServer, start_etcd


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """A plain-HTTP etcd; no fsync (tests need no durability) and 1 s progress notifies."""
    server = start_etcd(
        str(tmp_path_factory.mktemp("etcd")),
        fsync=False,
        progress_notify_interval="1s",
        max_request_bytes=64 * 1024,
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def etcd_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """An etcd that serves TLS and requires a client certificate."""
    server = start_etcd(str(tmp_path_factory.mktemp("etcd-tls")), tls=True, fsync=False)
    yield server
    server.stop()


@pytest.fixture
def down_endpoint() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    from tests.storage.etcd_server import free_port

    return f"http://127.0.0.1:{free_port()}"
