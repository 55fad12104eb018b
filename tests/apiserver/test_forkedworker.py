"""Forked workers: the child runs the worker's service with a reactor, environment and
log of its own, and ends as twistd would."""

from __future__ import annotations

import gc
import os
import signal
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest_twisted
from twisted.application.service import Service
from twisted.internet import error, reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger

from platform_api.apiserver.forkedworker import ForkedWorker

REPORT_FD = 3


class Collect(ProcessProtocol):
    def __init__(self) -> None:
        self.out: dict[int, bytes] = {1: b"", 2: b"", REPORT_FD: b""}
        self.ended: Deferred[Any] = Deferred()

    def childDataReceived(self, childFD: int, data: bytes) -> None:
        self.out[childFD] += data

    def processEnded(self, reason: Any) -> None:
        self.ended.callback(reason.value)


class Report(Service):
    """Tells descriptor 3 what the child sees, logs a line, then ends as ``end`` says."""

    def __init__(self, argv: list[str], inherited: socket.socket, end: str) -> None:
        self.argv = argv
        self.inherited = inherited.fileno()
        self.end = end

    def startService(self) -> None:
        from twisted.internet import reactor as current

        facts = {
            "argv": self.argv,
            "env": sorted(os.environ),
            "fresh reactor": current is not reactor and not current.running,
            "collector on": gc.isenabled(),
            "ignores Ctrl-C": signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
            "name": Path("/proc/self/comm").read_text().strip(),
            "inherited socket": os.readlink(f"/proc/self/fd/{self.inherited}"),
        }
        os.write(REPORT_FD, orjson.dumps(facts))
        Logger().info("worker {n} up", n=self.argv[0])
        if self.end == "stop":
            current.callLater(0, current.stop)
        else:
            current.callLater(0, os.kill, os.getpid(), signal.SIGTERM)


def fork(end: str, make: Any = None) -> Collect:
    held = socket.socket()  # open in the parent, not passed to the child
    protocol = Collect()
    protocol.ended.addBoth(lambda result: (held.close(), result)[1])
    ForkedWorker(
        reactor,
        make or (lambda argv: Report(argv, held, end)),
        ["w0", "--flag"],
        {"WORKER": "0/2"},
        protocol,
        {0: "w", 1: "r", 2: "r", REPORT_FD: "r"},
        "test-worker-0",
    )
    return protocol


@pytest_twisted.ensureDeferred
async def test_the_child_runs_the_service_with_its_own_reactor_environment_and_log() -> None:
    protocol = fork("stop")
    ended = await protocol.ended
    assert isinstance(ended, error.ProcessDone)
    assert orjson.loads(protocol.out[REPORT_FD]) == {
        "argv": ["w0", "--flag"],
        "env": ["WORKER"],
        "fresh reactor": True,
        "collector on": True,  # Twisted's fork turns it off for the exec
        "ignores Ctrl-C": True,  # the supervisor stops its workers
        "name": "test-worker-0",  # ps and top tell the workers apart
        # A number the fork closed is held on /dev/null: an inherited object that closes
        # it later cannot close what reused the number.
        "inherited socket": "/dev/null",
    }
    lines = protocol.out[1].decode().splitlines()
    assert [line.split(" ", 1)[1] for line in lines if "up" in line] == [
        "[tests.apiserver.test_forkedworker#info] worker w0 up"
    ]
    assert protocol.out[2] == b""
    assert reactor.running  # the parent's reactor is untouched


@pytest_twisted.ensureDeferred
async def test_a_child_stopped_by_a_signal_ends_with_it_as_twistd_does() -> None:
    protocol = fork("signal")
    ended = await protocol.ended
    assert isinstance(ended, error.ProcessTerminated)
    assert ended.signal == signal.SIGTERM


@pytest_twisted.ensureDeferred
async def test_a_service_that_cannot_be_built_ends_the_child_with_its_traceback() -> None:
    def broken(argv: list[str]) -> Service:
        raise ValueError("no such flag")

    protocol = fork("stop", broken)
    ended = await protocol.ended
    assert isinstance(ended, error.ProcessTerminated)
    assert ended.exitCode == 1
    assert b"ValueError: no such flag" in protocol.out[2]
