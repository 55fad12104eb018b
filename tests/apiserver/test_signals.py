"""Stop signals: the first stops the reactor once, however many arrive together; a
second ends a server at once (as kube-apiserver's does) and is ignored by a worker."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from twisted.internet.error import ReactorNotRunning
from twisted.internet.testing import MemoryReactor

from platform_api.apiserver import signals


class Reactor(MemoryReactor):
    """Runs what a signal handler queues for the reactor thread, and refuses a second
    stop as a real reactor does."""

    def __init__(self) -> None:
        super().__init__()
        self.stops = 0

    def callFromThread(self, f: Callable[..., Any], *args: Any) -> None:
        f(*args)

    def sigTerm(self, number: int, frame: Any) -> None:
        """Twisted's handler: it queues a stop, however stopping the reactor is."""
        self.callFromThread(self.stop)

    def stop(self) -> None:
        if self.stops:
            raise ReactorNotRunning()
        self.stops += 1

    def fire(self, phase: str, event: str) -> None:
        for f, args, kwargs in self.triggers.get(phase, {}).get(event, []):
            f(*args, **kwargs)


@pytest.fixture
def handlers() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in signals.STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def started(setup: Callable[[Reactor], None]) -> Reactor:
    reactor = Reactor()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a worker's: left to its supervisor
    signal.signal(signal.SIGTERM, reactor.sigTerm)
    setup(reactor)
    reactor.fire("after", "startup")
    return reactor


def deliver(signum: int) -> None:
    handler = signal.getsignal(signum)
    assert callable(handler)
    handler(signum, None)


def test_signals_arriving_together_stop_the_reactor_once(handlers: None) -> None:
    reactor = started(signals.ignore_repeated_signals)
    first = signal.getsignal(signal.SIGTERM)
    assert callable(first)
    first(signal.SIGTERM, None)
    # The second runs the same handler: it arrived before the first changed them.
    first(signal.SIGTERM, None)
    assert reactor.stops == 1
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_worker_ignores_a_repeated_stop_signal(handlers: None) -> None:
    reactor = started(signals.ignore_repeated_signals)
    deliver(signal.SIGTERM)
    deliver(signal.SIGTERM)  # its supervisor's, after the control group's
    assert reactor.stops == 1


def test_a_second_signal_ends_a_server_after_before_exit(
    handlers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(signals.os, "_exit", calls.append)
    reactor = started(lambda r: signals.exit_on_second_signal(r, lambda: calls.append("kill")))
    deliver(signal.SIGTERM)
    assert calls == [] and reactor.stops == 1
    deliver(signal.SIGTERM)
    assert calls == ["kill", 1]


def test_a_shutdown_begun_otherwise_arms_the_handlers(
    handlers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(signals.os, "_exit", calls.append)
    reactor = started(signals.exit_on_second_signal)
    reactor.fire("before", "shutdown")  # reactor.stop() from code, not a signal
    deliver(signal.SIGTERM)
    assert calls == [1] and reactor.stops == 0


def test_stop_reactor_tolerates_a_stopping_reactor() -> None:
    reactor = Reactor()
    signals.stop_reactor(reactor)
    signals.stop_reactor(reactor)
    assert reactor.stops == 1
