"""gRPC channels to etcd with failover over several endpoints, each call a Deferred.

grpcio runs calls on its own C threads; a finished call's future is handed back to the
reactor with ``callFromThread``, so the reactor never waits (the KMS client does the same).
A call goes to the endpoint that last answered and moves on when it is UNAVAILABLE: reads
always; writes only when gRPC says no connection was made (nothing was sent, so the write
cannot happen twice). Otherwise the caller sees ``Unavailable`` and decides (a CAS re-reads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc
from twisted.internet.defer import Deferred

from platform_api.storage.etcd import proto
from platform_api.storage.etcd.errors import Unavailable, from_status

# kube's etcd client takes responses of any size (MaxCallRecvMsgSize = MaxInt32); etcd
# enforces --max-request-bytes itself.
_OPTIONS = [
    ("grpc.max_receive_message_length", 2**31 - 1),
    ("grpc.max_send_message_length", 2**31 - 1),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
]
_NOT_CONNECTED = "failed to connect to all addresses"


@dataclass(frozen=True)
class TLSConfig:
    """PEM bytes of ``--etcd-cafile``, ``--etcd-certfile`` and ``--etcd-keyfile``."""

    ca_pem: bytes | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None

    @classmethod
    def from_files(cls, cafile: str = "", certfile: str = "", keyfile: str = "") -> TLSConfig:
        """Read at start-up (kube reads these files once too)."""

        def read(path: str) -> bytes | None:
            if not path:
                return None
            with open(path, "rb") as f:
                return f.read()

        return cls(read(cafile), read(certfile), read(keyfile))


def _channel(endpoint: str, tls: TLSConfig | None) -> grpc.Channel:
    """``http://host:port`` -> a plain channel, ``https://`` -> TLS with the client cert."""
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    target = parts.netloc
    if parts.scheme != "https":
        return grpc.insecure_channel(target, options=_OPTIONS)
    tls = tls or TLSConfig()
    credentials = grpc.ssl_channel_credentials(tls.ca_pem, tls.key_pem, tls.cert_pem)
    return grpc.secure_channel(target, credentials, options=_OPTIONS)


def _serialize(message: Any) -> bytes:
    return bytes(message.SerializeToString())


class Transport:
    """One channel per endpoint; ``call`` is a unary call with failover."""

    def __init__(
        self,
        endpoints: Sequence[str],
        reactor: Any,
        *,
        tls: TLSConfig | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.endpoints = list(endpoints)
        self.reactor = reactor
        self.timeout = timeout
        self.current = 0
        self.channels = [_channel(e, tls) for e in endpoints]
        self.unary = [
            {
                path: channel.unary_unary(path, _serialize, response.FromString)
                for path, response in proto.UNARY.items()
            }
            for channel in self.channels
        ]
        self.watch = [
            channel.stream_stream(proto.WATCH, _serialize, proto.WatchResponse.FromString)
            for channel in self.channels
        ]

    def _future(self, index: int, path: str, request: Any) -> Deferred[Any]:
        future = self.unary[index][path].future(request, timeout=self.timeout)
        d: Deferred[Any] = Deferred(lambda _: future.cancel())

        def done(f: Any) -> None:
            try:
                result, error = f.result(), None
            except grpc.RpcError as e:
                result, error = None, e
            except grpc.FutureCancelledError:
                return  # the Deferred was cancelled: it has fired already
            if error is None:
                self.reactor.callFromThread(d.callback, result)
            else:
                self.reactor.callFromThread(d.errback, error)

        future.add_done_callback(done)
        return d

    async def call(self, path: str, request: Any, *, read_only: bool) -> Any:
        """The response message of ``path``; raises an ``EtcdError``."""
        detail = ""
        for attempt in range(len(self.channels)):
            index = (self.current + attempt) % len(self.channels)
            try:
                response = await self._future(index, path, request)
            except grpc.RpcError as e:
                code, detail = e.code(), e.details() or ""
                retry = read_only or _NOT_CONNECTED in detail
                if code == grpc.StatusCode.UNAVAILABLE and retry:
                    continue
                raise from_status(code.value[0], detail) from None
            self.current = index
            return response
        raise Unavailable(f"no etcd endpoint answered: {detail}", 14)

    def close(self) -> None:
        for channel in self.channels:
            channel.close()
