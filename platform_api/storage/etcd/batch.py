"""Consistent reads that share etcd calls.

A consistent read must see every write acknowledged before it began, so it cannot use a
call sent before it arrived; it can share the next one.  ``Batched`` keeps at most one
call out: reads that arrive meanwhile wait for it to return and then go together, so
under load one etcd round trip serves many reads (kube's clients each make their own;
here every one of them costs Python time on the one reactor thread).  A batch's call runs
in the context of the first read in it, so a traced request's spans (storage/spans.py)
show the call it shared under that request, and under no other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import Context, copy_context
from typing import Generic, TypeVar

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.python.failure import Failure

T = TypeVar("T")
R = TypeVar("R")
_Read = tuple[T, Deferred[R], Context]  # an item, its reader, the context it was asked in


class Batched(Generic[T, R]):
    """``batched(item)`` fires with ``call``'s answer for ``item``; ``call`` gets the
    items of one batch (at most ``most``) and answers them in order."""

    def __init__(self, call: Callable[[list[T]], Awaitable[Sequence[R]]], most: int) -> None:
        self._call = call
        self._most = most
        self._out: list[_Read[T, R]] = []  # the batch whose call is on its way
        self._waiting: list[_Read[T, R]] = []  # who came after it was sent

    def __call__(self, item: T) -> Deferred[R]:
        reader: Deferred[R] = Deferred()
        self._waiting.append((item, reader, copy_context()))
        if not self._out:
            self._send()
        return reader

    def _send(self) -> None:
        self._out, self._waiting = self._waiting[: self._most], self._waiting[self._most :]
        items = [item for item, _, _ in self._out]
        first = self._out[0][2]
        first.run(lambda: ensureDeferred(self._ask(items)).addBoth(self._answered))

    async def _ask(self, items: list[T]) -> Sequence[R]:
        return await self._call(items)

    def _answered(self, result: Sequence[R] | Failure) -> None:
        readers, self._out = self._out, []
        if self._waiting:  # before the callbacks run: a reader may read again at once
            self._send()
        for index, (_, reader, _) in enumerate(readers):
            if isinstance(result, Failure):
                reader.errback(result)
            else:
                reader.callback(result[index])
