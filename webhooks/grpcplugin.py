"""Serving a sample plugin's gRPC service on a Unix socket (the KMS v2 plugin, the JWT
signer): grpcio's server in its own threads, until SIGTERM or Ctrl-C."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping
from concurrent import futures
from typing import Any

import grpc

from platform_api.grpcunix import unix_target

# method -> (handler(request, context), request parser, response serializer)
Methods = Mapping[
    str, tuple[Callable[[Any, Any], Any], Callable[[bytes], Any], Callable[[Any], bytes]]
]


def serve_unix(socket_path: str, service: str, methods: Methods, workers: int = 4) -> grpc.Server:
    """Start serving ``service`` on ``socket_path`` (``@name``: an abstract socket),
    replacing a stale socket file; the caller waits or stops the server."""
    if not socket_path.startswith("@"):
        if os.path.exists(socket_path):
            os.unlink(socket_path)
        socket_path = os.path.abspath(socket_path)
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=parse, response_serializer=serialize
        )
        for name, (fn, parse, serialize) in methods.items()
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(service, handlers)])
    server.add_insecure_port(unix_target(socket_path))
    server.start()
    return server


def run_until_stopped(server: grpc.Server, banner: str) -> int:
    """Announce the plugin, then serve until SIGTERM or Ctrl-C."""
    print(banner, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        server.stop(0)
    return 0
