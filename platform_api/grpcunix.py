"""Unary gRPC calls to a local plugin on a Unix socket: KMS v2 and the external JWT signer.

Both plugins speak plaintext gRPC over a socket on the same machine, are called rarely
(a probe, a signature per token) and must never stall the reactor: grpcio runs the call
on its own threads and the answer is handed back on the reactor thread.  Calls made
before the reactor runs (start-up) block instead, bounded by their timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import grpc
from twisted.internet.defer import Deferred

Serialize = Callable[[Any], bytes]
Parse = Callable[[bytes], Any]


def unix_target(path: str) -> str:
    """grpcio's name of a socket path as Go's ``net.Dial("unix", path)`` reads it: a
    leading ``@`` is Linux's abstract namespace."""
    if path.startswith("@"):
        return "unix-abstract:" + path[1:]
    return "unix:" + path


class UnaryClient:
    """One service's unary methods over one channel."""

    def __init__(
        self,
        target: str,
        service: str,
        methods: Mapping[str, tuple[Serialize, Parse]],
        *,
        wait_for_ready: bool = False,
        authority: str = "",
    ) -> None:
        options = [("grpc.default_authority", authority)] if authority else []
        self._channel = grpc.insecure_channel(target, options=options)
        self._wait = wait_for_ready
        self._calls: dict[str, Any] = {
            name: self._channel.unary_unary(
                f"/{service}/{name}",
                request_serializer=serialize,
                response_deserializer=parse,
            )
            for name, (serialize, parse) in methods.items()
        }

    def call(self, name: str, request: Any, timeout: float) -> Any:
        """A blocking call: for start-up, and for the rare read that must answer now."""
        return self._calls[name](request, timeout=timeout, wait_for_ready=self._wait)

    def call_async(self, name: str, request: Any, timeout: float, reactor: Any) -> Deferred[Any]:
        """The call as a Deferred fired on the reactor thread; the reactor never waits."""
        d: Deferred[Any] = Deferred()
        future = self._calls[name].future(request, timeout=timeout, wait_for_ready=self._wait)

        def done(f: Any) -> None:
            try:
                result, error = f.result(), None
            except Exception as e:  # grpc.RpcError, cancelled
                result, error = None, e
            reactor.callFromThread(d.errback if error else d.callback, error or result)

        future.add_done_callback(done)
        return d

    def close(self) -> None:
        self._channel.close()


def code_name(error: BaseException | None) -> str:
    """grpc-go's name of a call's outcome (``OK``, ``DeadlineExceeded``...), as kube
    labels its plugin metrics; an error that is no gRPC status is ``unknown-non-grpc``."""
    if error is None:
        return "OK"
    if isinstance(error, grpc.RpcError):
        try:
            return str(error.code().name).title().replace("_", "")
        except Exception:
            pass
    return "unknown-non-grpc"


def rpc_text(error: BaseException) -> str:
    """grpc-go's status error text: ``rpc error: code = X desc = Y``."""
    if not isinstance(error, grpc.RpcError):
        return str(error)
    try:
        code = error.code().name.title().replace("_", "")
        return f"rpc error: code = {code} desc = {error.details()}"
    except Exception:
        return str(error)
