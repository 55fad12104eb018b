"""The server's periodic tasks: one way to run work every so many seconds on the reactor.

A tick's failure is logged and the next tick runs anyway (a bare LoopingCall stops at
the first failure); the next tick starts only once the last one has finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

log = Logger()


def every(
    reactor: IReactorTime,
    interval: float,
    work: Callable[[], Any],
    what: str,
    *,
    now: bool = True,
) -> LoopingCall:
    """Run ``work`` (a coroutine function, or one returning a Deferred) every ``interval``
    seconds, the first time at once unless ``now`` is false; stop it with ``.stop()``."""

    def tick() -> Deferred[Any]:
        return ensureDeferred(work()).addErrback(lambda f: log.failure(what, f))

    loop = LoopingCall(tick)
    loop.clock = reactor
    loop.start(interval, now=now)
    return loop


def stop(loop: LoopingCall | None) -> None:
    """Stop ``loop`` if it runs (stopping twice is harmless here)."""
    if loop is not None and loop.running:
        loop.stop()
