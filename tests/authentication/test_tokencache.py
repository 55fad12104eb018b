"""kube's token cache in front of the bearer-token authenticators."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest_twisted
from twisted.internet.defer import Deferred, ensureDeferred

from platform_api.apiserver import metrics
from platform_api.authentication.interface import AuthenticationError, AuthResponse
from platform_api.authentication.tokencache import TokenCache
from platform_api.authentication.union import RequestAuthenticator
from platform_api.authentication.user import UserInfo

JANE = AuthResponse(UserInfo("jane"), (), ("a warning",), (("note", "kept"),))


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


class Lookups:
    """An authenticator whose answers the test gives, one Deferred per lookup."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, tuple[str, ...]]] = []
        self.pending: list[Deferred[AuthResponse | None]] = []

    def __call__(self, token: str, audiences: tuple[str, ...]) -> Deferred[AuthResponse | None]:
        self.asked.append((token, audiences))
        d: Deferred[AuthResponse | None] = Deferred()
        self.pending.append(d)
        return d

    def answer(self, value: Any) -> None:
        d = self.pending.pop(0)
        d.errback(value) if isinstance(value, Exception) else d.callback(value)


def _count(status: str) -> float:
    sample = metrics.REGISTRY.get_sample_value(
        "authentication_token_cache_request_total", {"status": status}
    )
    return sample or 0.0


def _ask(cache: TokenCache, token: str = "t", audiences: tuple[str, ...] = ()) -> Deferred[Any]:
    return ensureDeferred(cache.authenticate_token(token, audiences))


def test_a_success_is_kept_for_the_ttl_with_its_notes() -> None:
    clock, lookups = Clock(), Lookups()
    cache = TokenCache(lookups, clock)
    hits = _count("hit")
    first = _ask(cache)
    lookups.answer(JANE)
    assert first.result is JANE  # type: ignore[attr-defined]
    clock.now += 9.9
    again = _ask(cache)
    assert again.result is JANE  # type: ignore[attr-defined]  # warnings and notes too
    assert len(lookups.asked) == 1 and _count("hit") == hits + 1
    clock.now += 0.2  # past 10 s: asked again
    _ask(cache)
    assert len(lookups.asked) == 2


def test_failures_and_errors_are_asked_again_every_time() -> None:
    clock, lookups = Clock(), Lookups()
    cache = TokenCache(lookups, clock)
    refused = _ask(cache)
    lookups.answer(None)
    assert refused.result is None  # type: ignore[attr-defined]
    failed = _ask(cache)
    lookups.answer(AuthenticationError("token expired"))
    assert isinstance(failed.result.value, AuthenticationError)  # type: ignore[attr-defined]
    failed.addErrback(lambda _: None)
    _ask(cache)
    assert len(lookups.asked) == 3


def test_the_audiences_asked_for_are_part_of_the_key() -> None:
    clock, lookups = Clock(), Lookups()
    cache = TokenCache(lookups, clock)
    _ask(cache)
    lookups.answer(JANE)
    _ask(cache, audiences=("vault",))
    _ask(cache, audiences=("a", "b"))
    _ask(cache, audiences=("ab",))  # length-prefixed: not the same as ("a", "b")
    _ask(cache, token="other")
    assert lookups.asked == [
        ("t", ()),
        ("t", ("vault",)),
        ("t", ("a", "b")),
        ("t", ("ab",)),
        ("other", ()),
    ]


def test_callers_of_one_token_share_the_lookup_in_flight() -> None:
    clock, lookups = Clock(), Lookups()
    cache = TokenCache(lookups, clock)
    answers = [_ask(cache) for _ in range(3)]
    assert len(lookups.asked) == 1
    lookups.answer(JANE)
    assert [a.result for a in answers] == [JANE] * 3  # type: ignore[attr-defined]
    clock.now += 11
    failing = [_ask(cache) for _ in range(2)]
    lookups.answer(AuthenticationError("no"))
    for d in failing:
        assert str(d.result.value) == "no"  # type: ignore[attr-defined]
        d.addErrback(lambda _: None)


def test_a_full_cache_drops_what_has_expired() -> None:
    clock, lookups = Clock(), Lookups()
    cache = TokenCache(lookups, clock)
    for i in range(4096):
        _ask(cache, token=f"old-{i}")
        lookups.answer(JANE)
    clock.now += 11
    _ask(cache, token="new")
    lookups.answer(JANE)
    assert len(cache._entries) == 1


@pytest_twisted.ensureDeferred
async def test_the_chain_caches_its_methods_answers_and_can_be_told_not_to() -> None:
    class Counting:
        calls = 0

        async def authenticate_token(
            self, token: str, audiences: tuple[str, ...] = ()
        ) -> AuthResponse | None:
            Counting.calls += 1
            return JANE if token == "good" else None

    clock = Clock()
    cached = RequestAuthenticator([], [Counting()], None, ("api",), clock)
    for _ in range(3):
        assert await cached.authenticate_token("good") == replace(JANE, audiences=("api",))
    assert Counting.calls == 1
    uncached = RequestAuthenticator([], [Counting()], None, ("api",), clock, cache_ttl=0)
    for _ in range(3):
        assert await uncached.authenticate_token("good") == replace(JANE, audiences=("api",))
    assert Counting.calls == 4
