"""The external JWT signer (``--service-account-signing-endpoint``): kube's
ExternalJWTSigner, a process on a local Unix socket that signs every service-account
token and names the keys that verify them, so no signing key lives in the server.

At start-up the keys are fetched and the signer's longest token lifetime read, both
blocking before anything is served (waiting up to a minute for the socket, as kube
does).  Afterwards the keys are fetched again when the signer's refresh hint says (10 s
after a failure) and at once, one fetch at a time, when a token names a key ID the
cache lacks.  A signature comes back as the header and signature segments; the header
is checked as kube checks it, so a misbehaving signer yields an error, never a token
the server itself would refuse.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram, VecGauge
from platform_api.authentication import externaljwt_proto as pb
from platform_api.authentication.externaljwt_answers import (
    SignerError,
    VerificationKeys,
    checked_header,
    verification_keys,
)
from platform_api.authentication.serviceaccount import SigningError, VerifyingKey
from platform_api.gotext import quote
from platform_api.grpcunix import UnaryClient, code_name, rpc_text, unix_target

log = Logger()
Obj = dict[str, Any]
SYNC_TIMEOUT = 60.0  # kube's keySyncTimeout: the first fetch and each scheduled one
METADATA_TIMEOUT = 10.0
CALL_TIMEOUT = 60.0  # a Sign or an on-demand fetch: kube's default request timeout
RETRY_AFTER_FAILURE = 10.0  # kube's fallbackRefreshDuration

_FETCHES = ReactorCounter(
    "apiserver_externaljwt_fetch_keys_request_total",
    "[ALPHA] Total attempts at syncing supported JWKs",
    ["code"],
    REGISTRY,
)
_SIGNS = ReactorCounter(
    "apiserver_externaljwt_sign_request_total",
    "[ALPHA] Total attempts at signing JWT",
    ["code"],
    REGISTRY,
)
_LAST_FETCH = VecGauge(
    "apiserver_externaljwt_fetch_keys_success_timestamp",
    "[ALPHA] Unix Timestamp in seconds of the last successful FetchKeys request",
    REGISTRY,
)
_DATA_TIME = VecGauge(
    "apiserver_externaljwt_fetch_keys_data_timestamp",
    "[ALPHA] Unix Timestamp in seconds of the last successful FetchKeys data_timestamp "
    "value returned by the external signer",
    REGISTRY,
)
_DURATION = ReactorHistogram(
    "apiserver_externaljwt_request_duration_seconds",
    "[ALPHA] Request duration and time for calls to external-jwt-signer",
    ["method", "code"],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    REGISTRY,
)


class ExternalSigner:
    """The signer's client: a Signer for TokenIssuer and a KeySource for the verifiers."""

    def __init__(
        self,
        endpoint: str,
        reactor: Any,
        client: UnaryClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.reactor = reactor
        self.clock = clock  # wall time, for the metrics
        methods = {
            name: (lambda m: m.SerializeToString(), response.FromString)
            for name, (_, response) in pb.METHODS.items()
        }
        self.client = client or UnaryClient(
            unix_target(endpoint), pb.SERVICE, methods, wait_for_ready=True, authority="localhost"
        )
        self.current = VerificationKeys((), 0.0, 0.0)
        self._waiters: list[Deferred[None]] | None = None  # a fetch in flight
        self._timer: Any = None

    # -- start-up: blocking, before the reactor runs --------------------------------

    def initial_fill(self, timeout: float = SYNC_TIMEOUT) -> None:
        """The first fetch of the keys; raises SignerError in kube's words."""
        lead = (
            "while initially filling key cache: while performing initial cache fill: "
            "while fetching token verification keys: "
        )
        try:
            response = self._call_blocking("FetchKeys", pb.FetchKeysRequest(), timeout)
        except Exception as e:
            _FETCHES.inc(code_name(e))
            raise SignerError(lead + _fetch_error(e, self.endpoint)) from None
        try:
            self._store(response)
        except SignerError as e:
            raise SignerError(f"{lead}{e}") from None

    def max_token_expiration(self, timeout: float = METADATA_TIMEOUT) -> int:
        """The signer's longest token lifetime (its Metadata), in seconds."""
        try:
            response = self._call_blocking("Metadata", pb.MetadataRequest(), timeout)
        except Exception as e:
            raise SignerError(rpc_text(e)) from None
        return int(response.max_token_expiration_seconds)

    def _call_blocking(self, method: str, request: Any, timeout: float) -> Any:
        started = time.monotonic()
        try:
            response = self.client.call(method, request, timeout)
        except Exception as e:
            self._observe(method, started, e)
            raise
        self._observe(method, started, None)
        return response

    def start(self) -> None:
        """Fetch the keys again whenever the signer's refresh hint says."""
        self._schedule(self.current.next_refresh - self.reactor.seconds())

    def stop(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self.client.close()

    # -- Signer -----------------------------------------------------------------------

    async def sign(self, claims: Obj) -> str:
        """kube's GenerateToken: the payload signed by the signer, its header checked."""
        try:
            token = await self._sign(claims)
        except SignerError as e:
            _SIGNS.inc(e.code)
            raise SigningError(str(e)) from None
        _SIGNS.inc("OK")
        return token

    async def _sign(self, claims: Obj) -> str:
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        try:
            response = await self._call("Sign", pb.SignJWTRequest(claims=payload))
        except Exception as e:
            raise SignerError(f"while signing jwt: {rpc_text(e)}", code_name(e)) from None
        try:
            await self._check_header(response.header)
        except SignerError as e:
            raise SignerError(f"while validating header: {e}") from None
        if not response.signature:
            raise SignerError("empty signature returned")
        return f"{response.header}.{payload}.{response.signature}"

    async def _check_header(self, encoded: str) -> None:
        kid = checked_header(encoded)
        # A key kept only to verify old tokens must not sign new ones.
        if any(k.excluded for k in await self.keys_for(kid)):
            raise SignerError(
                f"key used for signing JWT (kid: {kid}) is excluded from OIDC discovery docs"
            )

    # -- KeySource --------------------------------------------------------------------

    async def keys_for(self, kid: str) -> list[VerifyingKey]:
        found = self._find(kid)
        if found:
            return found
        try:
            await self.sync()
        except SignerError as e:
            log.error("Error while syncing keys: {why}", why=str(e))
            return []
        found = self._find(kid)
        if not found:
            log.error("Key id {kid} not found after refresh", kid=quote(kid))
        return found

    def published(self) -> list[VerifyingKey]:
        return [k for k in self.current.keys if not k.excluded]

    def max_age(self) -> int:
        return max(0, int(self.current.next_refresh - self.reactor.seconds()))

    def _find(self, kid: str) -> list[VerifyingKey]:
        keys = self.current.keys
        return list(keys) if not kid else [k for k in keys if k.kid == kid]

    # -- fetching ---------------------------------------------------------------------

    async def sync(self) -> None:
        """Fetch the keys; callers arriving meanwhile share the one fetch in flight."""
        if self._waiters is not None:
            waiter: Deferred[None] = Deferred()
            self._waiters.append(waiter)
            await waiter
            return
        self._waiters = []
        error: SignerError | None = None
        try:
            await self._fetch()
        except SignerError as e:
            error = e
        waiters, self._waiters = self._waiters, None
        for w in waiters:
            w.errback(error) if error is not None else w.callback(None)
        if error is not None:
            raise error

    async def _fetch(self) -> None:
        try:
            response = await self._call("FetchKeys", pb.FetchKeysRequest())
        except Exception as e:
            _FETCHES.inc(code_name(e))
            raise SignerError(
                f"while fetching token verification keys: {_fetch_error(e)}", code_name(e)
            ) from None
        try:
            self._store(response)
        except SignerError as e:
            raise SignerError(f"while fetching token verification keys: {e}") from None

    def _store(self, response: Any) -> None:
        """Check and keep a FetchKeys answer (a bad one leaves the old keys in place)."""
        try:
            self.current = verification_keys(response, self.reactor.seconds())
        except SignerError:
            _FETCHES.inc("unknown-non-grpc")
            raise
        _FETCHES.inc("OK")
        _LAST_FETCH.set(self.clock())
        _DATA_TIME.set(self.current.data_timestamp)

    def _schedule(self, delay: float) -> None:
        self._timer = self.reactor.callLater(max(0.0, delay), self._scheduled)

    def _scheduled(self) -> None:
        def fetched(_: object) -> None:
            self._schedule(self.current.next_refresh - self.reactor.seconds())

        def failed(failure: Any) -> None:
            log.error(
                "when syncing supported public keys(Stale set of keys will be supported): {why}",
                why=failure.getErrorMessage(),
            )
            self._schedule(RETRY_AFTER_FAILURE)

        ensureDeferred(self.sync()).addCallbacks(fetched, failed)

    async def _call(self, method: str, request: Any) -> Any:
        started = time.monotonic()
        try:
            response = await self.client.call_async(method, request, CALL_TIMEOUT, self.reactor)
        except Exception as e:
            self._observe(method, started, e)
            raise
        self._observe(method, started, None)
        return response

    def _observe(self, method: str, started: float, error: BaseException | None) -> None:
        path = f"/{pb.SERVICE}/{method}"
        _DURATION.observe(time.monotonic() - started, path, code_name(error))


def _fetch_error(error: BaseException, endpoint: str = "") -> str:
    text = rpc_text(error)
    if endpoint and code_name(error) == "DeadlineExceeded":
        dial = _dial_problem(endpoint)
        if dial:  # grpc-go names what kept it from the socket; grpcio does not
            text = f"rpc error: code = DeadlineExceeded desc = latest balancer error: {dial}"
    return f"while getting externally supported jwt signing keys: {text}"


def _dial_problem(endpoint: str) -> str:
    """grpc-go's words for a socket that cannot be dialled ("" when it can)."""
    address = "\0" + endpoint[1:] if endpoint.startswith("@") else endpoint
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(address)
        except OSError as e:
            why = (e.strerror or str(e)).lower()
            return (
                'connection error: desc = "transport: Error while dialing: dial unix '
                f'{endpoint}: connect: {why}"'
            )
    return ""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
