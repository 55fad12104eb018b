"""kube's ``SerializeObject`` span: one per response written through its negotiated
serializers, under the span of whoever wrote it (a verb handler, or the filter that
refused the request), when the request is traced.

Its attributes name the request, the media type and kube's codec chain by the chain's
``Identifier()`` (a JSON object of sorted keys: a ``versioning`` codec, with the group
version it converts to when it converts, around the serializer); its events say which
``http.ResponseWriter`` kube's response went through (``%T`` of a Go type, which differs
with the filter that writes) and how many bytes it wrote, before any compression.  Each
case was read off kube-apiserver v1.36's own spans.  This server writes a body in one
piece, so the first write is the whole body (kube streams large lists in chunks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from twisted.web.server import Request

from platform_api.context import TRACE_ATTRIBUTE
from platform_api.errors import StatusError

# Where kube's answer is written, which names its response writer (``%T`` of a Go type):
# a verb handler's (the timeout filter's wrapper, outside tracing), a filter's inside the
# tracing filter (otelhttp's wrapper), go-restful's router's (no route, wrong method).
HANDLER, FILTER, ROUTER = "handler", "filter", "router"
_WRITERS = {
    (HANDLER, False): "*responsewriter.outerWithCloseNotifyFlushAndHijack",
    (HANDLER, True): "responsewriter.outerWithCloseNotifyAndFlush",
    (FILTER, False): (
        "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier; "
        "http.Hijacker }"
    ),
    (FILTER, True): (
        "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier }"
    ),
    (ROUTER, False): "*restful.Response",
    (ROUTER, True): "*restful.Response",
}
GZIP_WRITER = "*gzip.Writer"
# The group version kube's filters encode their Status errors in (401, 403, 429...).
FILTER_VERSION = "v1"


def _identifier(fields: dict[str, str]) -> str:
    """A Go ``map[string]string`` as encoding/json writes it: keys sorted, compact."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def serializer(encoding: str, pretty: bool = False) -> str:
    """The serializer's own identifier: json (and YAML, kube's json serializer in YAML
    mode), protobuf or cbor."""
    if encoding in ("protobuf", "cbor"):
        return encoding
    yaml = encoding == "yaml"
    flags = {"pretty": str(pretty and not yaml).lower(), "yaml": str(yaml).lower()}
    return _identifier({"name": "json", "strict": "false", **flags})


def versioning(encoding: str, pretty: bool, group_version: str | None) -> str:
    """A versioning codec around the serializer; ``group_version`` None when the codec
    converts to none (discovery documents, go-restful's own errors)."""
    fields = {"name": "versioning", "encoder": serializer(encoding, pretty)}
    if group_version is not None:
        fields["encodeGV"] = group_version
    return _identifier(fields)


def strip_version(inner: str) -> str:
    """The legacy discovery documents' codec (/api, /api/v1), which writes no apiVersion."""
    return _identifier({"name": "stripVersion", "encoder": inner})


@dataclass(frozen=True)
class Serialized:
    """How kube would have written a response: its codec chain and its writer."""

    encoder: str
    written_by: str = HANDLER


def traced(request: Request) -> bool:
    """Whether the request is traced: the span's identifiers are worth working out."""
    return getattr(request, TRACE_ATTRIBUTE, None) is not None


def for_discovery(path: str, pretty: bool, group_version: str) -> Serialized:
    """A discovery document: the aggregated one (``group_version`` its discovery group's)
    through a handler's writer; the legacy ones through the tracing filter's, with no
    conversion (and no apiVersion at all under /api)."""
    if group_version:
        return Serialized(versioning("json", pretty, group_version))
    encoder = versioning("json", pretty, None)
    if path in ("/api", "/api/v1"):
        encoder = strip_version(encoder)
    return Serialized(encoder, FILTER)


def for_object(encoding: str, pretty: bool, group_version: str) -> Serialized:
    """An object, list or Status a verb handler writes, in ``group_version``."""
    return Serialized(versioning(encoding, pretty, group_version))


def for_error(
    request: Request, error: StatusError, encoding: str, pretty: bool
) -> Serialized | None:
    """A Status error, as kube writes it where this one arose: in the handler's group
    version inside a handler, by go-restful's router, or in ``v1`` by a filter.  None
    when the request is not traced."""
    trace = getattr(request, TRACE_ATTRIBUTE, None)
    if trace is None:
        return None
    if error.router:
        return Serialized(versioning(encoding, pretty, None), ROUTER)
    if trace.handler_version is not None:
        return Serialized(versioning(encoding, pretty, trace.handler_version))
    writer = HANDLER if trace.authenticating else FILTER
    return Serialized(versioning(encoding, pretty, FILTER_VERSION), writer)


def writer(request: Request, serialized: Serialized, compressed: bool) -> str:
    """The Go type kube's answer went through: by where it was written, and HTTP/2's
    writers, which cannot be hijacked."""
    if compressed:
        return GZIP_WRITER
    return _WRITERS[serialized.written_by, request.clientproto == b"HTTP/2"]


def record(
    request: Request, media: bytes, serialized: Serialized, size: int, compressed: bool
) -> None:
    """The span, when the request is traced (its shape is the trace's)."""
    trace: Any = getattr(request, TRACE_ATTRIBUTE, None)
    if trace is not None:
        written = writer(request, serialized, compressed)
        trace.serialized(request, media.decode("latin-1"), serialized.encoder, written, size)
