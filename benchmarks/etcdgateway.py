"""Candidate (a) of benchmarks/etcdclients.py: a Twisted-native client on etcd's gRPC-JSON
gateway (POST /v3/kv/..., base64 keys), twisted.web's Agent with a persistent pool.

It was the first implementation of platform_api.storage.etcd and passed the same tests; kept
here so the comparison can be re-run. Transport only: the figures need put, range and txn.

One persistent connection pool per client; a call goes to the endpoint that last answered
and moves on to the next when a connection cannot be made (nothing was sent, so any call is
safe to repeat) or, for reads only, when an answer never came. Writes that may have reached
etcd are not repeated: the caller sees ``Unavailable`` and decides (a CAS re-reads first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from twisted.internet import defer, error
from twisted.internet.interfaces import IConsumer
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure
from twisted.web.client import (
    Agent,
    HTTPConnectionPool,
    ResponseDone,
    ResponseFailed,
    ResponseNeverReceived,
)
from twisted.web.http_headers import Headers
from twisted.web.iweb import IBodyProducer, IResponse
from zope.interface import implementer

from platform_api.client.kubeconfig import Connection, _Policy
from platform_api.storage.etcd.errors import EtcdError, Unavailable, from_status

_HEADERS = Headers({b"Content-Type": [b"application/json"]})

# Failures where the request never left: retrying on another endpoint cannot double a write.
_NOT_SENT = (
    error.ConnectError,
    error.ConnectionRefusedError,
    error.DNSLookupError,
    error.TimeoutError,
)


@implementer(IBodyProducer)
class _Bytes:
    """A body written in one go with its length up front (no chunked encoding, no
    Cooperator round trip as FileBodyProducer takes)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.length = len(data)

    def startProducing(self, consumer: IConsumer) -> defer.Deferred[None]:
        consumer.write(self.data)
        return defer.succeed(None)

    def pauseProducing(self) -> None:
        pass

    def resumeProducing(self) -> None:
        pass

    def stopProducing(self) -> None:
        pass


class Transport:
    """Posts JSON to ``<endpoint>/v3/...`` and returns the decoded answer."""

    def __init__(
        self,
        endpoints: Sequence[str],
        reactor: Any,
        *,
        timeout: float = 10.0,
        pool_size: int = 16,
    ) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.endpoints = [e.rstrip("/").encode() for e in endpoints]
        self.reactor = reactor
        self.timeout = timeout
        self.current = 0
        self.pool = HTTPConnectionPool(reactor, persistent=True)
        self.pool.maxPersistentPerHost = pool_size
        self.pool.retryAutomatically = False  # we decide what is safe to repeat
        policy = _Policy(Connection(""))
        self.agent = Agent(reactor, contextFactory=policy, pool=self.pool)
        self.stream_agent = Agent(reactor, contextFactory=policy)  # watches: no keep-alive

    def body(self, payload: dict[str, Any]) -> IBodyProducer:
        return _Bytes(orjson.dumps(payload))

    async def open(self, path: bytes, payload: dict[str, Any], *, stream: bool) -> IResponse:
        """Send ``payload`` to the first endpoint that takes the connection; the response is
        unread. Only connection failures move on, so this is safe for writes too."""
        agent = self.stream_agent if stream else self.agent
        last: Exception | None = None
        for attempt in range(len(self.endpoints)):
            index = (self.current + attempt) % len(self.endpoints)
            d = agent.request(b"POST", self.endpoints[index] + path, _HEADERS, self.body(payload))
            if not stream:
                d.addTimeout(self.timeout, self.reactor)
            try:
                response: IResponse = await d
            except _NOT_SENT as e:
                last = e
                continue
            except ResponseNeverReceived as e:
                if not _all_not_sent(e):
                    raise Unavailable(f"etcd {self.endpoints[index].decode()}: {e}", 14) from e
                last = e
                continue
            except defer.TimeoutError as e:
                raise Unavailable(f"etcd {self.endpoints[index].decode()}: timed out", 4) from e
            self.current = index
            return response
        raise Unavailable(f"no etcd endpoint answered: {last}", 14)

    async def call(self, path: bytes, payload: dict[str, Any], *, read_only: bool) -> Any:
        """One unary call; a read is repeated on the next endpoint when its answer is lost."""
        tries = len(self.endpoints) if read_only else 1
        for attempt in range(tries):
            try:
                response = await self.open(path, payload, stream=False)
                d = read_body(response)
                d.addTimeout(self.timeout, self.reactor)
                data = await d
            except (ResponseFailed, defer.TimeoutError, Unavailable) as e:
                if attempt + 1 < tries:
                    self.current = (self.current + 1) % len(self.endpoints)
                    continue
                if isinstance(e, Unavailable):
                    raise
                raise Unavailable(f"etcd: {e}", 14) from e
            return decode(response.code, data)
        raise AssertionError("unreachable")

    def close(self) -> defer.Deferred[Any]:
        return self.pool.closeCachedConnections()


class _Body(Protocol):
    """Collects a response body (twisted.web's readBody warns on pooled transports)."""

    def __init__(self, done: defer.Deferred[bytes]) -> None:
        self.done = done
        self.parts: list[bytes] = []

    def dataReceived(self, data: bytes) -> None:
        self.parts.append(data)

    def connectionLost(self, reason: Failure = ResponseDone) -> None:  # type: ignore[assignment]
        if reason.check(ResponseDone):
            self.done.callback(b"".join(self.parts))
        else:
            self.done.errback(reason)


def read_body(response: IResponse) -> defer.Deferred[bytes]:
    done: defer.Deferred[bytes] = defer.Deferred()
    response.deliverBody(_Body(done))
    return done


def _all_not_sent(failure: ResponseNeverReceived) -> bool:
    return all(f.check(*_NOT_SENT) for f in failure.reasons)


def decode(status: int, data: bytes) -> Any:
    try:
        body = orjson.loads(data) if data else None
    except orjson.JSONDecodeError as e:
        raise EtcdError(f"etcd answered HTTP {status} with invalid JSON: {data[:200]!r}") from e
    if status != 200:
        if not isinstance(body, dict):
            raise Unavailable(f"etcd answered HTTP {status}", 14)
        raise from_status(int(body.get("code") or 0), str(body.get("message", "")))
    return body
