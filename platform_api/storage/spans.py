"""The storage's spans of a traced request: kube's etcd3 store opens ``Create etcd3`` and
``GuaranteedUpdate etcd3`` under the handler's span and marks its steps on them
(``Encode succeeded``, ``Txn call succeeded``...).

Go hands the request's trace down in its ``context.Context``; here a context variable
carries it, so the storage interface stays as it is and a request that is not traced
pays one lookup per write.  Twisted runs each coroutine in a copy of the context it
was started in, so a request's trace is seen by the storage calls it awaits and by
nothing else (the etcd watch loop, another request's write).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class Opener(Protocol):
    """What a traced request offers the layers below it (context.Trace)."""

    @property
    def audit_id(self) -> str: ...

    def child(self, name: str, attributes: dict[str, Any]) -> Any: ...


# The request's trace, set where its span is started (None: not traced).
TRACE: ContextVar[Opener | None] = ContextVar("platform_api_trace", default=None)
# The storage span open in this coroutine, that ``event`` marks.
_OPEN: ContextVar[Any] = ContextVar("platform_api_storage_span", default=None)


@contextmanager
def opened(name: str, attributes: Callable[[str], dict[str, Any]]) -> Iterator[None]:
    """A span ``name`` under the request's current one while the block runs, when the
    request is traced; ``attributes`` gets the request's audit ID (only called then)."""
    trace = TRACE.get()
    if trace is None:
        yield
        return
    span = trace.child(name, attributes(trace.audit_id))
    token = _OPEN.set(span)
    try:
        yield
    finally:
        _OPEN.reset(token)
        span.end()


def event(name: str, **attributes: Any) -> None:
    """One of kube's events on the open storage span (nothing when there is none)."""
    span = _OPEN.get()
    if span is not None:
        span.add_event(name, attributes)


def attribute(name: str, value: Any) -> None:
    """An attribute learnt after the open storage span began (nothing when none is)."""
    span = _OPEN.get()
    if span is not None:
        span.set_attribute(name, value)
