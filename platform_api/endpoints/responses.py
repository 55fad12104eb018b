"""Writing responses: status codes, Content-Length, gzip, Warning headers, Status errors.

Every non-streaming response goes through ``finish``, so Content-Length is always
set (twisted.web would otherwise fall back to chunked encoding) and the headers kube
sends on every response are in one place.
"""

from __future__ import annotations

import gzip
import unicodedata
from collections.abc import Callable
from typing import Any

import orjson
from twisted.web.server import Request

from platform_api import errors
from platform_api.codec import UnwritableYAML, cbor, protobuf, yaml_dumps
from platform_api.context import Context
from platform_api.endpoints import serializespan
from platform_api.endpoints.negotiation import error_encoding
from platform_api.endpoints.serializespan import Serialized
from platform_api.errors import StatusError
from platform_api.gotext import go_escaped, object_json
from platform_api.scheme.types import rebrand_group

# kube compresses get/list responses of more than 128 KiB (level 1: cheap, still 5-10x).
GZIP_THRESHOLD = 128 * 1024
_CACHE_CONTROL = b"no-cache, private"
# Set on each request by the server: whether it speaks CBOR (errors are written in it).
CBOR_ATTRIBUTE = "_platform_cbor"
# Set False on a request when the APIResponseCompression gate is off.
COMPRESSION_ATTRIBUTE = "_platform_compression"


def warning_header(text: str) -> bytes:
    """RFC 7234 warning: ``299 - "text"`` with quotes and backslashes escaped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'.encode()


WARNINGS_TOTAL_RUNES = 4 * 1024
WARNING_RUNES = 256


def _control_free(text: str) -> bool:
    """kube's NewWarningHeader refuses text with a control character (Go's
    unicode.IsControl: C0, DEL and C1) and the recorder drops that warning."""
    return not any(unicodedata.category(ch) == "Cc" for ch in text)


def sent_warnings(texts: list[str]) -> list[str]:
    """What kube's warning recorder sends of a request's warnings, in order: all of
    them while they total 4096 characters; past that each is cut to 256 characters,
    and none is added once the cut ones reach 4096."""
    texts = [text for text in texts if text and _control_free(text)]
    out: list[str] = []
    written, truncating = 0, False
    for i, text in enumerate(texts):
        if truncating and written >= WARNINGS_TOTAL_RUNES:
            break
        sent = text[:WARNING_RUNES] if truncating else text
        if truncating or written + len(sent) <= WARNINGS_TOTAL_RUNES:
            out.append(sent)
            written += len(sent)
            continue
        truncating = True  # replay everything so far, cut
        out = [earlier[:WARNING_RUNES] for earlier in texts[: i + 1]]
        written = sum(len(t) for t in out)
    return out


def write_warnings(request: Request, ctx: Context) -> None:
    """The request's warnings as ``Warning`` headers, before the status line goes out."""
    for text in sent_warnings(ctx.warnings):
        request.responseHeaders.addRawHeader(b"warning", warning_header(text))


def _accepts_gzip(request: Request) -> bool:
    """kube's ``negotiateContentEncoding``: a comma-separated token that is exactly gzip."""
    header = request.getHeader(b"accept-encoding")
    if header is None or not getattr(request, COMPRESSION_ATTRIBUTE, True):
        return False
    return any(t.strip() == b"gzip" for t in header.split(b","))


# Go's status texts where twisted.web has none ("Unknown Status") or words them otherwise.
GO_STATUS_TEXT = {
    408: b"Request Timeout",
    422: b"Unprocessable Entity",
    429: b"Too Many Requests",
    431: b"Request Header Fields Too Large",
    504: b"Gateway Timeout",
    507: b"Insufficient Storage",
}


def finish(
    request: Request,
    code: int,
    body: bytes,
    content_type: bytes = b"application/json",
    *,
    ctx: Context | None = None,
    compressible: bool = False,
    headers: dict[str, str] | None = None,
    go_json: bool = True,
    serialized: Serialized | None = None,
) -> bytes:
    """Set status and headers for ``body``; return the bytes Klein/twisted should write.
    A JSON body goes out escaped as Go's encoder writes it (``go_json``; kube-openapi's
    v2 document is the one JSON kube writes without).  ``serialized``: kube writes this
    answer through its serializers, in a span of its own when the request is traced."""
    request.setResponseCode(code, GO_STATUS_TEXT.get(code))
    request.setHeader(b"content-type", content_type)
    request.setHeader(b"cache-control", _CACHE_CONTROL)
    if ctx is not None:
        write_warnings(request, ctx)
    for name, value in (headers or {}).items():
        request.setHeader(name.encode(), value.encode())
    if go_json and content_type.startswith(b"application/json"):
        body = go_escaped(body)
    size, compressed = len(body), False
    if compressible and size > GZIP_THRESHOLD and _accepts_gzip(request):
        body, compressed = gzip.compress(body, compresslevel=1), True
        request.setHeader(b"content-encoding", b"gzip")
        varies = request.responseHeaders.getRawHeaders(b"vary") or []
        if b"Accept-Encoding" not in varies:  # added beside any other, as Go's Header.Add
            request.responseHeaders.addRawHeader(b"vary", b"Accept-Encoding")
    if serialized is not None:
        serializespan.record(request, content_type, serialized, size, compressed)
    request.setHeader(b"content-length", str(len(body)).encode())
    if request.method == b"HEAD":
        return b""
    return body


def encode(
    obj: Any, fmt: str = "json", pretty: bool = False, byte_fields: cbor.ByteFields | None = None
) -> bytes:
    """A whole body in ``fmt``; ``byte_fields``: where a built-in kind keeps []byte
    fields, which CBOR carries as raw bytes.  JSON ends in a newline, as kube's
    serializer writes it (Go's json.Encoder), unless pretty (json.MarshalIndent)."""
    if fmt == "yaml":
        try:
            return yaml_dumps(obj)
        except UnwritableYAML as e:  # kube's encoder error, as a Status of no reason
            raise errors.unknown(str(e)) from None
    if fmt == "cbor":
        return cbor.encode(obj, byte_fields)
    if pretty:
        return object_json(obj, orjson.OPT_INDENT_2)
    return object_json(obj, orjson.OPT_APPEND_NEWLINE)


_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # what Go's ParseBool reads as true
_HUMAN_AGENTS = (b"curl", b"Wget", b"Mozilla/5.0")


def is_pretty(request: Request) -> bool:
    """Whether kube indents a JSON answer (``isPrettyPrint``): a non-empty ``pretty``
    parameter as Go's ParseBool reads it (false when it cannot), else whether the
    client is a browser, curl or wget."""
    values = request.args.get(b"pretty")
    if values and values[0]:
        return values[0].decode("latin-1") in _GO_TRUE
    agent = request.getHeader(b"user-agent") or b""
    return agent.startswith(_HUMAN_AGENTS)


def bare(request: Request, code: int) -> bytes:
    """A response with no body and no media type (kube's OpenAPI 404/406, an empty log)."""
    request.defaultContentType = None
    finish(request, code, b"")
    request.responseHeaders.removeHeader(b"content-type")
    return b""


def audit_binary(ctx: Context | None, encoding: str, made: Callable[[], Any]) -> None:
    """Hand the audit event an answer it cannot read back from the wire (Protobuf, CBOR):
    ``made`` gives it as JSON data, called only if the event records it."""
    audit = ctx.audit_response if ctx is not None else None
    if audit is not None and encoding in ("protobuf", "cbor"):
        audit.answered(made)


def status_error(request: Request, error: StatusError, ctx: Context | None = None) -> bytes:
    """A Status body for ``error`` in the first of JSON, YAML, Protobuf (and CBOR when
    served) the client accepts: kube answers binary clients' errors in their encoding."""
    if error.plain is not None:
        request.setHeader(b"x-content-type-options", b"nosniff")
        plain = b"text/plain; charset=utf-8"
        return finish(request, error.code, error.plain, plain, headers=error.headers)
    if ctx is not None and ctx.render_group:
        error = _upstream_named(error, ctx.render_group)
    accept = (request.getHeader(b"accept") or b"").decode("latin-1")
    # kube writes a 406 in JSON to CBOR clients (the same negotiation fails for it).
    cbor_ok = getattr(request, CBOR_ATTRIBUTE, False) and error.code != 406
    fmt, media = error_encoding(accept, cbor_ok)
    pretty = fmt == "json" and is_pretty(request)
    serialized = serializespan.for_error(request, error, fmt, pretty)
    audit_binary(ctx, fmt, error.status)
    if fmt == "protobuf":
        body, content_type = protobuf.encode(error.status()), media.encode()
    elif fmt == "cbor":
        body, content_type = cbor.encode(error.status()), b"application/cbor"
    elif fmt == "raw":  # kube's WriteRawJSON: indented, whatever the client asked
        body = orjson.dumps(error.status(typed=not error.untyped_text), option=orjson.OPT_INDENT_2)
        content_type, serialized = b"application/json", None
    else:
        try:
            body = encode(error.status(typed=not error.untyped_text), fmt, pretty)
        except StatusError as unwritable:  # kube writes the encoder's error instead
            body = encode(unwritable.status(), fmt, pretty)
        content_type = b"application/yaml" if fmt == "yaml" else b"application/json"
        if error.untyped_text:  # kube's timeout filter names no media type of its own
            content_type, serialized = b"text/plain; charset=utf-8", None
    return finish(
        request,
        error.code,
        body,
        content_type,
        ctx=ctx,
        headers=error.headers,
        serialized=serialized,
    )


def _upstream_named(error: StatusError, upstream: str) -> StatusError:
    """The error as kube words it for a request that named the upstream group:
    ``roles.rbac.authorization.k8s.io "x" not found``, ``details.group`` to match."""
    branded = rebrand_group(upstream)
    details = error.details
    if not details or details.get("group") != branded:
        return error
    renamed = StatusError(
        error.code,
        error.reason,
        error.message.replace(f".{branded} ", f".{upstream} ", 1),
        {**details, "group": upstream},
        error.headers,
    )
    renamed.metadata, renamed.untyped_text = error.metadata, error.untyped_text
    return renamed


def write_error(request: Request, error: StatusError, ctx: Context | None = None) -> None:
    """Write a Status response and finish the request (for filters outside Klein)."""
    body = status_error(request, error, ctx)
    if not getattr(request, "_disconnected", False) and not request.finished:
        request.write(body)
        request.finish()
