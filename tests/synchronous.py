"""Running a coroutine that never waits (everything it awaits has fired) to its end."""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import ensureDeferred
from twisted.python.failure import Failure


def run(coroutine: Any) -> Any:
    """Its result, or the exception it raised; an error if it is still waiting."""
    out: list[Any] = []
    ensureDeferred(coroutine).addBoth(out.append)
    assert out, "the coroutine is still waiting"
    if isinstance(out[0], Failure):
        out[0].raiseException()
    return out[0]
