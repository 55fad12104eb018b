"""A large request's whole-object steps on a thread, so the reactor keeps serving.

Decoding a write against its schema, applying a patch, recording field ownership and
validating walk every field of the object (~10 µs a field in CPython), and PyYAML writes
about 1.5 MB a second: a 1.3 MB ConfigMap of 90,000 keys held the reactor 0.65 s and
every other request of the server waited.  kube-apiserver gives each request a goroutine;
here a request whose body, or whose object or list answered as YAML or a table, is large
is marked (``mark``), and ``run`` hands those steps to a thread and awaits them.  The GIL
passes back to the reactor every switch interval, so the server answers others meanwhile.
CPython's default interval, 5 ms, is paid again at each system call of a small request (the
reactor gives the GIL up in every recv, send and epoll_wait): once the thread starts, the
interval is 1 ms.  benchmarks/stallbench.py, A/B: the small GETs answered during the large
requests went from 2,400 (p99 39 ms) to 4,600-5,000 (p99 18-19 ms), the large requests
took 25% longer; 2 ms answered 3,100 (p99 28-29 ms), 0.5 ms slowed the large ones more.

One thread per reactor: with the GIL two such steps take no less time than one after the
other, and each holds a large object; more threads would only multiply the memory.  Small
requests run their steps inline, as before: the hand-off costs more than it saves.  The
steps run in a copy of the request's context (``contextvars``), so what they read of it
(its verb, its requester) is the request's own.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

P = ParamSpec("P")
T = TypeVar("T")

# Below this a body decodes, is tracked and validated in well under ~20 ms.
THRESHOLD = 64 * 1024
# How long the thread may hold the GIL while the reactor waits for it (the module says why).
SWITCH_INTERVAL = 0.001

_POOLS: dict[int, ThreadPool] = {}
# The reactor of a request whose body is over THRESHOLD; None for the rest.
_LARGE: contextvars.ContextVar[Any] = contextvars.ContextVar("large_request", default=None)


def pool(reactor: Any) -> ThreadPool:
    """The reactor's one thread for large requests' steps, started on first use (with
    the process's GIL switch interval at most SWITCH_INTERVAL) and stopped with the
    reactor."""
    found = _POOLS.get(id(reactor))
    if found is None:
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        found = _POOLS[id(reactor)] = ThreadPool(0, 1, "large-requests")
        found.start()
        reactor.addSystemEventTrigger("during", "shutdown", _stop, reactor)
    return found


def _stop(reactor: Any) -> None:
    found = _POOLS.pop(id(reactor), None)
    if found is not None:
        found.stop()


def mark(reactor: Any, size: int) -> bool:
    """Mark the current request as large when its body of ``size`` bytes is; says so."""
    if size < THRESHOLD:
        return False
    _LARGE.set(reactor)
    return True


def is_large() -> bool:
    return _LARGE.get() is not None


async def run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)``: on the reactor's thread for large requests (what it
    raises is raised here), inline for the rest."""
    reactor = _LARGE.get()
    if reactor is None:
        return fn(*args, **kwargs)
    context = contextvars.copy_context()

    def step() -> T:
        return context.run(fn, *args, **kwargs)

    result: T = await deferToThreadPool(reactor, pool(reactor), step)
    return result
