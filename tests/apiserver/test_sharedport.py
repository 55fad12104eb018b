"""A port on a listening socket shared by workers: least connections first, through the
board every worker maps (a real socket and file, a fake clock)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock, deferLater
from twisted.protocols.policies import WrappingFactory

from platform_api.apiserver.sharedport import (
    MAX_WAITS,
    REFRESH,
    STAND_ASIDE,
    ConnectionBoard,
    SharedPort,
    adopt_shared,
)


async def _turns() -> None:
    """Let the reactor run long enough to accept whatever it will."""
    await deferLater(reactor, 0.05, lambda: None)  # type: ignore[arg-type]


def test_the_board_is_shared_through_its_file(tmp_path: Path) -> None:
    path = str(tmp_path / "connections")
    first, second = ConnectionBoard(path, 0, 2), ConnectionBoard(path, 1, 2)
    first.publish(5)
    assert second.fewest_elsewhere() == 5
    second.publish(2)
    assert first.fewest_elsewhere() == 2
    assert ConnectionBoard(str(tmp_path / "alone"), 0, 1).fewest_elsewhere() is None


async def _serve(tmp_path: Path, clock: Clock) -> tuple[SharedPort, Any, ConnectionBoard]:
    listener = socket.create_server(("127.0.0.1", 0))
    factory: Any = WrappingFactory(Factory.forProtocol(Protocol))
    path = str(tmp_path / "connections")
    port = adopt_shared(reactor, listener.fileno(), factory, ConnectionBoard(path, 0, 2), clock)
    listener.detach()  # adopt_shared closed the descriptor
    return port, factory, ConnectionBoard(path, 1, 2)


@pytest_twisted.ensureDeferred
async def test_one_connection_per_turn_while_no_sibling_holds_fewer(tmp_path: Path) -> None:
    clock = Clock()
    port, factory, sibling = await _serve(tmp_path, clock)
    sibling.publish(1)
    clients = [socket.create_connection(("127.0.0.1", port.getHost().port)) for _ in range(3)]
    try:
        await _turns()
        assert len(factory.protocols) == 2  # one per turn until it held more than 1
        assert sibling.fewest_elsewhere() == 2  # and it says so on the board
        # standing aside for the sibling; the count is republished every REFRESH
        assert sorted(c.getTime() for c in clock.getDelayedCalls()) == [STAND_ASIDE, REFRESH]
        for _ in range(MAX_WAITS):  # the sibling never takes it: accept anyway
            clock.advance(STAND_ASIDE)
            await _turns()
        assert len(factory.protocols) == 3
    finally:
        for client in clients:
            client.close()
        await port.stopListening()
    assert clock.getDelayedCalls() == []  # the refresh and any resume went with the port
