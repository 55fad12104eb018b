"""``next_state``, every backend's update step: preconditions, no write for no change (but
for a stale value), and the whole-object decode and comparison on a large request's thread."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from platform_api import heavy
from platform_api.storage.interface import INVALID_OBJECT, Preconditions, StorageError, Stored
from platform_api.storage.transformer import StaleStored
from platform_api.storage.updates import next_state

KEY = b"/core/configmaps/default/cm"
OBJ = {"metadata": {"name": "cm", "uid": "u1", "resourceVersion": "7"}, "data": {"a": "b"}}


class Watched(Stored):
    """Records the threads its object was decoded on."""

    __slots__ = ("threads",)

    def __init__(self, data: bytes) -> None:
        super().__init__(KEY, 7, data)
        self.threads: list[int] = []

    def copy(self) -> dict[str, Any]:
        self.threads.append(threading.get_ident())
        return super().copy()

    @property
    def object(self) -> dict[str, Any]:
        self.threads.append(threading.get_ident())
        return super().object


def _set(key: str, value: str) -> Any:
    def update(obj: dict[str, Any] | None, _current: Stored | None) -> dict[str, Any]:
        assert obj is not None
        obj["data"][key] = value
        return obj

    return update


async def _in_request(size: int, work: Any) -> Any:
    async def request() -> Any:
        heavy.mark(reactor, size)
        return await work()

    return await Deferred.fromCoroutine(request())


@pytest_twisted.ensureDeferred
async def test_a_change_is_the_next_state_and_no_change_writes_nothing() -> None:
    current = Stored(KEY, 7, orjson.dumps(OBJ))
    changed = await next_state(KEY, current, _set("a", "c"), None)
    assert changed == {**OBJ, "data": {"a": "c"}}
    assert current.object == OBJ  # the update edited a private copy
    assert await next_state(KEY, current, _set("a", "b"), None) is None


@pytest_twisted.ensureDeferred
async def test_a_stale_value_is_written_again_unchanged() -> None:
    stale = StaleStored(KEY, 7, orjson.dumps(OBJ))
    assert await next_state(KEY, stale, _set("a", "b"), None) == OBJ


@pytest_twisted.ensureDeferred
async def test_a_failed_precondition_is_refused_before_the_update_runs() -> None:
    current = Stored(KEY, 7, orjson.dumps(OBJ))

    def never(obj: Any, _current: Any) -> Any:
        raise AssertionError("the update ran")

    with pytest.raises(StorageError) as caught:
        await next_state(KEY, current, never, Preconditions(uid="u2"))
    assert caught.value.code == INVALID_OBJECT


@pytest_twisted.ensureDeferred
async def test_a_large_request_decodes_and_compares_on_its_thread() -> None:
    small, large = Watched(orjson.dumps(OBJ)), Watched(orjson.dumps(OBJ))
    await _in_request(heavy.THRESHOLD - 1, lambda: next_state(KEY, small, _set("a", "b"), None))
    await _in_request(heavy.THRESHOLD, lambda: next_state(KEY, large, _set("a", "b"), None))
    main = threading.get_ident()
    assert small.threads == [main, main]  # the copy, then the object compared with
    assert len(large.threads) == 2 and main not in large.threads
