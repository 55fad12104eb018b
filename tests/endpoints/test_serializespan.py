"""kube's codec identifiers as its SerializeObject spans print them (read off
kube-apiserver v1.36's spans), and where each kind of answer says it was written."""

from __future__ import annotations

from typing import Any

from platform_api.context import TRACE_ATTRIBUTE
from platform_api.endpoints import serializespan
from platform_api.errors import method_not_allowed, not_found, path_not_found

JSON_V1 = (
    r'{"encodeGV":"v1","encoder":"{\"name\":\"json\",\"pretty\":\"false\",'
    r'\"strict\":\"false\",\"yaml\":\"false\"}","name":"versioning"}'
)


def test_serializers() -> None:
    assert serializespan.serializer("json") == (
        '{"name":"json","pretty":"false","strict":"false","yaml":"false"}'
    )
    assert serializespan.serializer("json", pretty=True) == (
        '{"name":"json","pretty":"true","strict":"false","yaml":"false"}'
    )
    assert serializespan.serializer("yaml", pretty=True) == (
        '{"name":"json","pretty":"false","strict":"false","yaml":"true"}'
    )
    assert serializespan.serializer("protobuf") == "protobuf"
    assert serializespan.serializer("cbor") == "cbor"


def test_codec_chains() -> None:
    assert serializespan.versioning("json", False, "v1") == JSON_V1
    assert serializespan.versioning("protobuf", False, "apps/v1") == (
        '{"encodeGV":"apps/v1","encoder":"protobuf","name":"versioning"}'
    )
    assert serializespan.for_discovery("/api", False, "").encoder == (
        r'{"encoder":"{\"encoder\":\"{\\\"name\\\":\\\"json\\\",\\\"pretty\\\":\\\"false'
        r"\\\",\\\"strict\\\":\\\"false\\\",\\\"yaml\\\":\\\"false\\\"}\",\"name\":\"versioning"
        r'\"}","name":"stripVersion"}'
    )
    groups = serializespan.for_discovery("/apis/apps", False, "")
    assert groups.encoder == serializespan.versioning("json", False, None)
    assert groups.written_by == serializespan.FILTER
    aggregated = serializespan.for_discovery("/apis", False, "apidiscovery.platform.io/v2")
    assert aggregated.written_by == serializespan.HANDLER


class _Trace:
    """The response part of a traced request (context.Trace), recording its spans."""

    audit_id = "a-1"

    def __init__(self, handler_version: str | None, authenticating: bool = False) -> None:
        self.handler_version, self.authenticating = handler_version, authenticating
        self.spans: list[tuple[str, str, str, int]] = []

    def serialized(self, request: Any, media: str, encoder: str, writer: str, size: int) -> None:
        self.spans.append((media, encoder, writer, size))


class _Request:
    method, path, clientproto = b"GET", b"/api/v1/namespaces/a/configmaps/x", b"HTTP/1.1"


def _traced(trace: _Trace | None) -> Any:
    request = _Request()
    if trace is not None:
        setattr(request, TRACE_ATTRIBUTE, trace)
    return request


def test_errors_name_where_they_were_written() -> None:
    handler = _traced(_Trace("ex.com/v1"))
    written = serializespan.for_error(handler, not_found("widgets", "ex.com", "x"), "json", False)
    assert written == serializespan.Serialized(serializespan.versioning("json", False, "ex.com/v1"))
    routed = serializespan.for_error(handler, path_not_found(), "yaml", False)
    assert routed == serializespan.Serialized(
        serializespan.versioning("yaml", False, None), serializespan.ROUTER
    )
    assert serializespan.for_error(handler, method_not_allowed(), "json", False) == (
        serializespan.Serialized(
            serializespan.versioning("json", False, None), serializespan.ROUTER
        )
    )
    filters = _traced(_Trace(None))
    refused = serializespan.for_error(filters, not_found("x", "", "y"), "protobuf", False)
    assert refused == serializespan.Serialized(
        serializespan.versioning("protobuf", False, "v1"), serializespan.FILTER
    )
    authentication = _traced(_Trace(None, authenticating=True))
    unauthorized = serializespan.for_error(authentication, not_found("x", "", "y"), "json", False)
    assert unauthorized == serializespan.Serialized(JSON_V1, serializespan.HANDLER)
    assert serializespan.for_error(_traced(None), path_not_found(), "json", False) is None


def test_the_writer_by_where_the_protocol_and_compression() -> None:
    trace = _Trace("v1")
    serialized = serializespan.Serialized(JSON_V1)
    serializespan.record(_traced(trace), b"application/json", serialized, 390, False)
    serializespan.record(_traced(trace), b"application/json", serialized, 300_391, True)
    http2 = _traced(trace)
    http2.clientproto = b"HTTP/2"
    serializespan.record(http2, b"application/json", serialized, 10, False)
    filters = serializespan.Serialized(JSON_V1, serializespan.FILTER)
    serializespan.record(http2, b"application/json", filters, 10, False)
    serializespan.record(_traced(trace), b"application/json", filters, 10, False)
    assert trace.spans == [
        ("application/json", JSON_V1, "*responsewriter.outerWithCloseNotifyFlushAndHijack", 390),
        ("application/json", JSON_V1, "*gzip.Writer", 300_391),
        ("application/json", JSON_V1, "responsewriter.outerWithCloseNotifyAndFlush", 10),
        (
            "application/json",
            JSON_V1,
            "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier }",
            10,
        ),
        (
            "application/json",
            JSON_V1,
            "struct { httpsnoop.Unwrapper; http.ResponseWriter; http.Flusher; http.CloseNotifier; "
            "http.Hijacker }",
            10,
        ),
    ]
    serializespan.record(_traced(None), b"application/json", serialized, 1, False)  # untraced
