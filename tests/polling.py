"""Waiting on the running reactor for something to become true (reactor-backed tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet import reactor
from twisted.internet.task import deferLater


async def until(check: Callable[[], Any], timeout: float = 10.0, step: float = 0.05) -> None:
    """Return once ``check()`` is true; fail the test after ``timeout`` seconds."""
    for _ in range(int(timeout / step)):
        if check():
            return
        await deferLater(reactor, step, lambda: None)
    raise AssertionError("timed out")


def process_ended(pid: int) -> bool:
    """Whether process ``pid`` has ended: gone, or a zombie its parent has not reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
