"""A large request's whole-object steps run on the reactor's one thread for them, in the
request's context; a small request's run inline.  Each request is a coroutine driven by a
Deferred, which runs it in a context of its own, as the server's requests are."""

from __future__ import annotations

import contextvars
import sys
import threading

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from platform_api import errors, heavy

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="")


def _where(*args: object, **kwargs: object) -> tuple[int, str, tuple[object, ...], dict]:
    return threading.get_ident(), WHO.get(), args, kwargs


@pytest_twisted.ensureDeferred
async def test_a_small_request_runs_its_steps_inline() -> None:
    async def request() -> tuple[bool, tuple]:
        marked = heavy.mark(reactor, heavy.THRESHOLD - 1)
        return marked, await heavy.run(_where, 1, k=2)

    marked, (thread, _who, args, kwargs) = await Deferred.fromCoroutine(request())
    assert marked is False
    assert (thread, args, kwargs) == (threading.get_ident(), (1,), {"k": 2})


@pytest_twisted.ensureDeferred
async def test_a_large_request_runs_its_steps_on_one_thread_in_its_context() -> None:
    async def request(who: str) -> list[tuple]:
        assert heavy.mark(reactor, heavy.THRESHOLD) and heavy.is_large()
        WHO.set(who)
        return [await heavy.run(_where, who), await heavy.run(_where)]

    first = await Deferred.fromCoroutine(request("a"))
    second = await Deferred.fromCoroutine(request("b"))
    threads = {step[0] for step in first + second}
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert [(step[1], step[2]) for step in first + second] == [
        ("a", ("a",)),
        ("a", ()),
        ("b", ("b",)),
        ("b", ()),
    ]
    assert not heavy.is_large()  # the marks stayed in the requests' contexts
    # The reactor gets the GIL back within 1 ms of wanting it, not CPython's 5 ms.
    assert sys.getswitchinterval() <= heavy.SWITCH_INTERVAL


def _refuse() -> None:
    raise errors.bad_request("no")


@pytest_twisted.ensureDeferred
async def test_what_a_step_raises_on_the_thread_is_raised_to_the_request() -> None:
    async def request() -> None:
        heavy.mark(reactor, 10 * heavy.THRESHOLD)
        await heavy.run(_refuse)

    with pytest.raises(errors.StatusError) as caught:
        await Deferred.fromCoroutine(request())
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400,
        "BadRequest",
        "no",
    )
