"""The storage's spans of a traced request: kube's etcd3 store opens ``Create etcd3`` and
``GuaranteedUpdate etcd3`` under the handler's span and marks its steps on them
(``Encode succeeded``, ``Txn call succeeded``...); its watch cache opens ``cacher.Get``;
its etcd client a gRPC client span per call.

Go hands the request's trace down in its ``context.Context``; here a context variable
carries it, so the storage interface stays as it is and a request that is not traced
pays one lookup per write.  Twisted runs each coroutine in a copy of the context it
was started in, so a request's trace is seen by the storage calls it awaits and by
nothing else (the etcd watch loop, another request's write).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar, Token
from typing import Any, Protocol


class Opener(Protocol):
    """What a traced request offers the layers below it (context.Trace)."""

    @property
    def audit_id(self) -> str: ...

    def child(self, name: str, attributes: dict[str, Any], parent: Any = None) -> Any: ...

    def grpc_call(self, method: str, host: str, port: int, parent: Any = None) -> GrpcCall: ...


class GrpcCall(Protocol):
    """otelgrpc's client span of one unary call (the etcd client's)."""

    def sent(self, size: int) -> None: ...

    def received(self, size: int) -> None: ...

    def end(self, code: int, message: str) -> None: ...


# The request's trace, set where its span is started (None: not traced).
TRACE: ContextVar[Opener | None] = ContextVar("platform_api_trace", default=None)
# The storage span open in this coroutine, that ``event`` marks.
_OPEN: ContextVar[Any] = ContextVar("platform_api_storage_span", default=None)


class _Opened:
    """A storage span while a block runs: the current one for ``event``, then ended."""

    def __init__(self, span: Any) -> None:
        self._span = span
        self._token: Token[Any] | None = None

    def __enter__(self) -> None:
        self._token = _OPEN.set(self._span)

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _OPEN.reset(self._token)
        self._span.end()


_UNTRACED = nullcontext()  # shared: an untraced read or write makes no object for it


def opened(name: str, attributes: Callable[[str], dict[str, Any]]) -> AbstractContextManager[None]:
    """A span ``name`` while the block runs, when the request is traced: under the
    storage span open around it, else the request's current one.  ``attributes`` gets
    the request's audit ID (only called then)."""
    trace = TRACE.get()
    if trace is None:
        return _UNTRACED
    return _Opened(trace.child(name, attributes(trace.audit_id), _OPEN.get()))


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


def grpc_call(method: str, host: str, port: int) -> GrpcCall | None:
    """otelgrpc's client span of a call ``method`` (``etcdserverpb.KV/Txn``) to
    ``host:port`` made by a traced request, under its open storage span (kube's etcd
    client is instrumented so); None for a request that is not traced (or no request:
    the watch loop's and the cache's own calls)."""
    trace = TRACE.get()
    if trace is None:
        return None
    return trace.grpc_call(method, host, port, _OPEN.get())
