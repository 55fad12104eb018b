"""kube's token cache: a bearer token that authenticated is taken for 10 s without asking
its authenticator again.

kube-apiserver puts this cache in front of all its token authenticators (token file,
service-account and bootstrap tokens, OIDC and JWT authenticators, the webhook), so a
client sending the same token on every request verifies a signature once per 10 s, not
once per request (a service-account JWT costs ~0.5 ms to verify here).  As kube's:

- the key is a keyed hash of the audiences asked for and the token (tokens are not kept,
  and a client cannot aim for collisions);
- only successes are kept, for 10 s: a token whose account was deleted a moment ago is
  still taken until then; failures and errors are asked again every time;
- the warnings and audit annotations of the authentication are kept with it, and given
  again on each hit;
- callers that arrive while the same token is being authenticated share that one lookup.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable

from prometheus_client import Gauge
from twisted.internet.defer import Deferred

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram
from platform_api.authentication.interface import AuthenticationError, AuthResponse

SUCCESS_TTL = 10.0  # kube's TokenSuccessCacheTTL (kube-apiserver has no flag for it)
_SWEEP_AT = 4096  # entries; past this, expired ones are dropped on the next insert
_MOST = 65536  # past this even after a sweep, the cache starts again

_REQUESTS = ReactorCounter(
    "authentication_token_cache_request_total", "[ALPHA] ", ["status"], REGISTRY
)
_LATENCY = ReactorHistogram(
    "authentication_token_cache_request_duration_seconds",
    "[ALPHA] ",
    ["status"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    REGISTRY,
)
_FETCHES = ReactorCounter(
    "authentication_token_cache_fetch_total", "[ALPHA] ", ["status"], REGISTRY
)
_ACTIVE = Gauge(
    "authentication_token_cache_active_fetch_count", "[ALPHA] ", ["status"], registry=REGISTRY
)

Lookup = Callable[[str, tuple[str, ...]], Awaitable[AuthResponse | None]]


class TokenCache:
    def __init__(
        self, lookup: Lookup, clock: Callable[[], float], ttl: float = SUCCESS_TTL
    ) -> None:
        self.lookup = lookup
        self.clock = clock
        self.ttl = ttl
        self._secret = os.urandom(32)
        self._entries: dict[bytes, tuple[float, AuthResponse]] = {}
        self._fetching: dict[bytes, list[Deferred[AuthResponse | None]]] = {}

    async def authenticate_token(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> AuthResponse | None:
        started = self.clock()
        key = self._key(token, audiences)
        entry = self._entries.get(key)
        if entry is not None and entry[0] > started:
            self._done("hit", started)
            return entry[1]
        try:
            return await self._fetch(key, token, audiences)
        finally:
            self._done("miss", started)

    async def _fetch(
        self, key: bytes, token: str, audiences: tuple[str, ...]
    ) -> AuthResponse | None:
        waiting = self._fetching.get(key)
        if waiting is not None:  # the same token is being looked up: share its answer
            shared: Deferred[AuthResponse | None] = Deferred()
            waiting.append(shared)
            blocked = _ACTIVE.labels("blocked")
            blocked.inc()
            try:
                return await shared
            finally:
                blocked.dec()
        self._fetching[key] = []
        in_flight = _ACTIVE.labels("in_flight")
        in_flight.inc()
        error: AuthenticationError | None = None
        found: AuthResponse | None = None
        try:
            found = await self.lookup(token, audiences)
        except AuthenticationError as e:
            error = e
        finally:
            in_flight.dec()
            waiters = self._fetching.pop(key)
        _FETCHES.inc("error" if error is not None else "ok")
        if found is not None:
            self._keep(key, found)
        for waiter in waiters:
            waiter.errback(error) if error is not None else waiter.callback(found)
        if error is not None:
            raise error
        return found

    def _keep(self, key: bytes, found: AuthResponse) -> None:
        now = self.clock()
        if len(self._entries) >= _SWEEP_AT:
            self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
            if len(self._entries) >= _MOST:
                self._entries = {}
        self._entries[key] = (now + self.ttl, found)

    def _key(self, token: str, audiences: tuple[str, ...]) -> bytes:
        """kube's key: length-prefixed audiences then the token, hashed with a secret."""
        digest = hashlib.blake2b(key=self._secret, digest_size=16)
        digest.update(len(audiences).to_bytes(4, "big"))
        for audience in audiences:
            data = audience.encode()
            digest.update(len(data).to_bytes(4, "big") + data)
        digest.update(token.encode())
        return digest.digest()

    def _done(self, status: str, started: float) -> None:
        _REQUESTS.inc(status)
        # kube observes whole milliseconds
        _LATENCY.observe(int((self.clock() - started) * 1000) / 1000, status)
