"""Documents served as Go's ``http.ServeContent`` serves them (kube's OpenAPI handlers).

A client that cached a document revalidates it: ``If-None-Match`` with its ETag, or
``If-Modified-Since`` with its Last-Modified, and gets a bodiless 304 when it has not
changed (kubectl's HTTP cache does so).  ``Range`` asks for parts of it: one range is a
206 with its Content-Range, several a ``multipart/byteranges`` 206, none that overlaps a
416.  The preconditions are checked in Go's order (If-Match, If-Unmodified-Since,
If-None-Match, If-Modified-Since, If-Range).
"""

from __future__ import annotations

import email.utils
import os
from collections.abc import Callable
from enum import Enum

from twisted.web.server import Request

from platform_api.endpoints.responses import finish


class _Cond(Enum):
    NONE = 0
    TRUE = 1
    FALSE = 2


class _RangeError(ValueError):
    pass


_NO_OVERLAP = "invalid range: failed to overlap"


def http_date(when: float) -> str:
    """Go's http.TimeFormat."""
    return email.utils.formatdate(when, usegmt=True)


def serve_content(
    request: Request,
    body: bytes,
    content_type: bytes,
    modified: float | None,
    headers: dict[str, str],
    compressible: bool = False,
) -> bytes:
    """Answer with ``body`` (or part of it, or a 304/412/416), sent as it is: a part's
    offsets count its bytes.  ``headers`` may hold the document's ETag; ``modified``
    (seconds) is its Last-Modified."""
    headers = dict(headers)
    if modified is not None:
        headers["last-modified"] = http_date(modified)
    done = _preconditions(request, headers, modified, content_type)
    if done is not None:
        return done
    wanted = _range_header(request, headers, modified)
    try:
        ranges = _parse_ranges(wanted, len(body))
    except _RangeError as e:  # Go's serveError drops the document's ETag and date
        over = {"content-range": f"bytes */{len(body)}"} if str(e) == _NO_OVERLAP else {}
        return _range_error(request, str(e), over)
    if sum(end - start for start, end in ranges) > len(body):
        ranges = []  # asks for more than the whole: Go sends the whole
    headers["accept-ranges"] = "bytes"
    if len(ranges) == 1:
        start, end = ranges[0]
        headers["content-range"] = f"bytes {start}-{end - 1}/{len(body)}"
        return finish(request, 206, body[start:end], content_type, headers=headers, go_json=False)
    if ranges:
        boundary = os.urandom(30).hex()
        parts = b"".join(
            b"\r\n--%s\r\nContent-Range: bytes %d-%d/%d\r\nContent-Type: %s\r\n\r\n%s"
            % (boundary.encode(), start, end - 1, len(body), content_type, body[start:end])
            for start, end in ranges
        )
        multipart = parts[2:] + b"\r\n--%s--\r\n" % boundary.encode()
        media = f"multipart/byteranges; boundary={boundary}".encode()
        return finish(request, 206, multipart, media, headers=headers, go_json=False)
    return finish(
        request, 200, body, content_type, headers=headers, compressible=compressible, go_json=False
    )


def _preconditions(
    request: Request, headers: dict[str, str], modified: float | None, content_type: bytes
) -> bytes | None:
    etag = headers.get("etag", "")
    matched = _if_match(request, etag)
    if matched is _Cond.NONE:
        matched = _if_unmodified_since(request, modified)
    if matched is _Cond.FALSE:
        return _bodiless(request, 412, headers, content_type)
    none_match = _if_none_match(request, etag)
    if none_match is _Cond.FALSE:
        if request.method in (b"GET", b"HEAD"):
            return _not_modified(request, headers)
        return _bodiless(request, 412, headers, content_type)
    if none_match is _Cond.NONE and _if_modified_since(request, modified) is _Cond.FALSE:
        return _not_modified(request, headers)
    return None


def _range_header(request: Request, headers: dict[str, str], modified: float | None) -> str:
    wanted = (request.getHeader(b"range") or b"").decode("latin-1")
    if not wanted or request.method not in (b"GET", b"HEAD"):
        return wanted
    condition = (request.getHeader(b"if-range") or b"").decode("latin-1")
    if not condition:
        return wanted
    tag, _ = _scan_etag(condition)
    if tag:
        return wanted if _strong_match(tag, headers.get("etag", "")) else ""
    since = _parse_time(condition)
    if modified is None or since is None:
        return ""
    return wanted if int(modified) == since else ""


def _if_match(request: Request, etag: str) -> _Cond:
    return _match_list(request.getHeader(b"if-match"), etag, _strong_match)


def _if_none_match(request: Request, etag: str) -> _Cond:
    found = _match_list(request.getHeader(b"if-none-match"), etag, _weak_match)
    # If-None-Match holds when nothing matched
    return {_Cond.TRUE: _Cond.FALSE, _Cond.FALSE: _Cond.TRUE}.get(found, _Cond.NONE)


def _match_list(header: bytes | None, etag: str, match: Callable[[str, str], bool]) -> _Cond:
    """TRUE if an entry of the header matches ``etag`` (or is ``*``), FALSE if none does,
    NONE without the header; an entry that is no ETag ends the reading (as Go's)."""
    if header is None:
        return _Cond.NONE
    text = header.decode("latin-1")
    while True:
        text = text.lstrip(" \t,")
        if not text:
            return _Cond.FALSE
        if text.startswith("*"):
            return _Cond.TRUE
        tag, text = _scan_etag(text)
        if not tag:
            return _Cond.FALSE
        if match(tag, etag):
            return _Cond.TRUE


def _scan_etag(text: str) -> tuple[str, str]:
    """Go's scanETag: a (W/)"..." tag at the start of ``text`` and what follows ("" if none)."""
    text = text.lstrip(" \t")
    start = 2 if text.startswith("W/") else 0
    if len(text) - start < 2 or text[start] != '"':
        return "", ""
    for i in range(start + 1, len(text)):
        c = text[i]
        if c == '"':
            return text[: i + 1], text[i + 1 :]
        if c != "\x21" and not ("\x23" <= c <= "\x7e") and c < "\x80":
            return "", ""
    return "", ""


def _strong_match(a: str, b: str) -> bool:
    return a == b and a != "" and not a.startswith("W/")


def _weak_match(a: str, b: str) -> bool:
    return a.removeprefix("W/") == b.removeprefix("W/")


def _if_unmodified_since(request: Request, modified: float | None) -> _Cond:
    since = _parse_time((request.getHeader(b"if-unmodified-since") or b"").decode("latin-1"))
    if since is None or modified is None:
        return _Cond.NONE
    return _Cond.TRUE if int(modified) <= since else _Cond.FALSE


def _if_modified_since(request: Request, modified: float | None) -> _Cond:
    if request.method not in (b"GET", b"HEAD"):
        return _Cond.NONE
    since = _parse_time((request.getHeader(b"if-modified-since") or b"").decode("latin-1"))
    if since is None or modified is None:
        return _Cond.NONE
    return _Cond.FALSE if int(modified) <= since else _Cond.TRUE


def _parse_time(text: str) -> int | None:
    """Go's http.ParseTime (RFC 1123, RFC 850, ANSI C), in whole seconds."""
    if not text:
        return None
    try:
        return int(email.utils.parsedate_to_datetime(text).timestamp())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _parse_ranges(header: str, size: int) -> list[tuple[int, int]]:
    """Go's parseRange: [start, end) pairs; _RangeError with its text."""
    if not header:
        return []
    if not header.startswith("bytes="):
        raise _RangeError("invalid range")
    ranges: list[tuple[int, int]] = []
    past_the_end = False
    for raw in header[len("bytes=") :].split(","):
        spec = raw.strip(" \t")
        if not spec:
            continue
        first, dash, last = spec.partition("-")
        first, last = first.strip(" \t"), last.strip(" \t")
        if not dash:
            raise _RangeError("invalid range")
        if not first:  # a suffix: the last N bytes
            count = _go_int(last) if last[:1] != "-" else None
            if count is None or count < 0:
                raise _RangeError("invalid range")
            ranges.append((size - min(count, size), size))
            continue
        start = _go_int(first)
        if start is None or start < 0:
            raise _RangeError("invalid range")
        if start >= size:
            past_the_end = True
            continue
        end = _go_int(last) if last else size - 1
        if end is None or start > end:
            raise _RangeError("invalid range")
        ranges.append((start, min(end, size - 1) + 1))
    if past_the_end and not ranges and size > 0:
        raise _RangeError(_NO_OVERLAP)
    return ranges


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign, then digits."""
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _not_modified(request: Request, headers: dict[str, str]) -> bytes:
    """Go's writeNotModified: no media type, size or encoding; no Last-Modified beside an
    ETag."""
    kept = {k: v for k, v in headers.items() if k != "last-modified" or "etag" not in headers}
    return _bodiless(request, 304, kept)


def _bodiless(
    request: Request, code: int, headers: dict[str, str], content_type: bytes = b""
) -> bytes:
    """A 304, or a 412 (which keeps the document's media type, set before Go checks)."""
    request.defaultContentType = None
    finish(request, code, b"", content_type, headers=headers)
    if not content_type:
        request.responseHeaders.removeHeader(b"content-type")
    if code == 304:
        request.responseHeaders.removeHeader(b"content-length")
    return b""


def _range_error(request: Request, text: str, headers: dict[str, str]) -> bytes:
    headers["x-content-type-options"] = "nosniff"
    return finish(request, 416, f"{text}\n".encode(), b"text/plain; charset=utf-8", headers=headers)
