"""The gRPC client families kube's etcd client exports (go-grpc-prometheus's interceptors):
the calls started on etcd connections, the messages sent and received on them, and how
each call ended, by its gRPC code.  A watch is one call, a bidirectional stream, whatever
it carries; every other call here is unary.  Counted on the reactor, so plain counters.
"""

from __future__ import annotations

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter
from platform_api.storage.etcd import proto
from platform_api.storage.etcd.grpcwire import code_name

_CALL = ["grpc_method", "grpc_service", "grpc_type"]  # sorted, as Go's exposition writes them
STARTED = ReactorCounter(
    "grpc_client_started_total", "Total number of RPCs started on the client.", _CALL, REGISTRY
)
HANDLED = ReactorCounter(
    "grpc_client_handled_total",
    "Total number of RPCs completed by the client, regardless of success or failure.",
    ["grpc_code", *_CALL],
    REGISTRY,
)
SENT = ReactorCounter(
    "grpc_client_msg_sent_total",
    "Total number of gRPC stream messages sent by the client.",
    _CALL,
    REGISTRY,
)
RECEIVED = ReactorCounter(
    "grpc_client_msg_received_total",
    "Total number of RPC stream messages received by the client.",
    _CALL,
    REGISTRY,
)
Call = tuple[str, str, str]  # (method, service, type): one call's labels
_labels: dict[str, Call] = {}  # by path


def call(path: str) -> Call:
    """The labels of a call to ``path`` (``/etcdserverpb.KV/Range``), once started."""
    labels = _labels.get(path)
    if labels is None:
        service, _, method = path[1:].rpartition("/")
        kind = "bidi_stream" if path == proto.WATCH else "unary"
        labels = _labels[path] = (method, service, kind)
    STARTED.inc(*labels)
    return labels


def sent(labels: Call) -> None:
    SENT.inc(*labels)


def received(labels: Call) -> None:
    RECEIVED.inc(*labels)


def handled(labels: Call, code: int) -> None:
    HANDLED.inc(code_name(code), *labels)


def unary(path: str, code: int) -> None:
    """A unary call made outside a connection's protocol (a blocking one at start), once
    it ended: ``code`` its status; a message each way unless it never got an answer."""
    labels = call(path)
    sent(labels)
    if code == 0:
        received(labels)
    handled(labels, code)
