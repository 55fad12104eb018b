"""The test etcd's start survives a port taken between ``free_port`` and etcd's bind
(parallel test processes pick ports at once): a first start moves to new ports."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.storage import etcd_server as harness
from tests.storage.etcd_server import EtcdServer, PortTaken


def _occupied() -> tuple[socket.socket, int]:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    return holder, holder.getsockname()[1]


def test_a_first_start_moves_off_a_taken_port(tmp_path: Path) -> None:
    holder, taken = _occupied()
    server = EtcdServer(str(tmp_path / "data"), fsync=False, port=taken)
    try:
        server.start()
        assert server.port != taken
        assert server.healthy()
        assert "address already in use" in server.log_tail()  # the first launch's end
    finally:
        server.stop()
        holder.close()


def test_a_restart_keeps_its_port_and_says_it_is_taken(tmp_path: Path) -> None:
    server = EtcdServer(str(tmp_path / "data"), fsync=False).start()
    port = server.port
    server.stop()
    holder = socket.create_server(("127.0.0.1", port))
    try:
        with pytest.raises(PortTaken):
            server.start()
        assert server.port == port
    finally:
        server.stop()
        holder.close()


def test_a_cluster_starts_afresh_when_a_members_peer_port_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder, taken = _occupied()
    made: list[EtcdServer] = []

    def member(data_dir: str, **options: Any) -> EtcdServer:
        server = EtcdServer(data_dir, **options)
        if not made:
            server.peer_port = taken
        made.append(server)
        return server

    monkeypatch.setattr(harness, "EtcdServer", member)
    members: list[EtcdServer] = []
    try:
        members = harness.start_etcd_cluster(str(tmp_path / "etcd"), 3, fsync=False)
        assert members == made
        assert all(m.healthy() for m in members)
        assert taken not in [m.peer_port for m in members]
        assert "address already in use" in members[0].log_tail()
    finally:
        for m in made:
            m.stop()
        holder.close()
