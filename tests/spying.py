"""Recording the calls code makes while letting them through: for tests asserting that a
path does not (or does, once) reach something costly, such as a list from storage."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def calls_of(owner: Any, method: str) -> Iterator[list[tuple[Any, ...]]]:
    """The positional arguments of each call of ``owner.method`` made inside; the calls
    go through (a coroutine function stays one)."""
    real, own = getattr(owner, method), method in vars(owner)
    seen: list[tuple[Any, ...]] = []

    def plain(*args: Any, **kwargs: Any) -> Any:
        seen.append(args)
        return real(*args, **kwargs)

    async def awaited(*args: Any, **kwargs: Any) -> Any:
        seen.append(args)
        return await real(*args, **kwargs)

    setattr(owner, method, awaited if inspect.iscoroutinefunction(real) else plain)
    try:
        yield seen
    finally:
        if own:
            setattr(owner, method, real)
        else:
            delattr(owner, method)
