"""A second stop signal ends the process at once, as kube-apiserver's does."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from twisted.internet.testing import MemoryReactor

from platform_api.apiserver import signals


@pytest.fixture
def handlers() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in signals.STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_the_handlers_change_only_once_the_shutdown_begins(handlers: None) -> None:
    reactor = MemoryReactor()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a worker's: left to its supervisor
    before = signal.getsignal(signal.SIGTERM)
    signals.exit_on_second_signal(reactor)
    assert signal.getsignal(signal.SIGTERM) is before
    assert reactor.triggers == {"before": {"shutdown": [(signals.arm, (), {})]}}
    signals.arm()  # the reactor begins to shut down (the first signal)
    assert signal.getsignal(signal.SIGTERM) is signals._exit_now
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
