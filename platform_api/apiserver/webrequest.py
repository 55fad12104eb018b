"""twisted.web's Request and Site as kube's server answers: bodies bounded, no
``Server`` header, no access log, Go's idle timeout and ALPN choice."""

from __future__ import annotations

import io
import time
from typing import Any

from twisted.python.failure import Failure
from twisted.web.http import datetimeToString
from twisted.web.server import Request, Site

from platform_api import errors
from platform_api.apiserver import h2channel, httplimits
from platform_api.gotext import go_text

MAX_BODY = 3 * 1024 * 1024  # kube refuses larger request bodies with 413
H2_TOO_MANY_FIELDS = b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"


class APIRequest(Request):
    """A request whose body is held in memory up to ``MAX_BODY``, answered without the
    ``Server`` header kube does not send.

    ``body_problem`` is what kube's handler meets when it reads the body: its 413 past
    ``MAX_BODY``, or the Status 500 of a chunked encoding Go cannot read.  Only a handler
    that reads the body answers with it (a GET with a body is served), as in kube; the
    HTTP/1.1 channel then serves the request at once and closes the connection after it.
    """

    body_problem: errors.StatusError | None = None
    go_path_empty = False  # ``GET https://host``: Go's path is empty (requestline.py)
    too_many_fields = False  # an HTTP/2 request with more header fields than Go takes
    h2_bad_request = b""  # Go's 400 to an HTTP/2 request naming HTTP/1 framing (goh2.py)
    _received = 0

    def gotLength(self, length: int | None) -> None:
        """In memory whatever the length (Twisted spills a body of no or a large length
        to a temporary file): no more than ``MAX_BODY`` of it is kept."""
        self.content = io.BytesIO()

    def getHeader(self, key: Any) -> Any:
        """A header's first value, as Go's ``Header.Get`` reads it (Twisted's is the
        last: of two Authorization headers kube authenticates the first).  Asked by a
        text name, the value is text as Go's JSON writes its bytes (a byte that is no
        UTF-8 is U+FFFD), where Twisted's strict decoding raised on it."""
        raw = key.encode("latin-1") if isinstance(key, str) else key
        values = self.requestHeaders.getRawHeaders(raw)
        if not values:
            return None
        return go_text(values[0]) if isinstance(key, str) else values[0]

    def handleContentChunk(self, data: bytes) -> None:
        if self.body_problem is not None:
            return
        self._received += len(data)
        if self._received > MAX_BODY:
            self.body_problem = errors.request_entity_too_large(f"limit is {MAX_BODY}")
            self.content = io.BytesIO()
            return
        super().handleContentChunk(data)

    def body_unreadable(self, message: str) -> None:
        """Go's chunked reader stopped at ``message``: a handler reading the body gets it
        as kube's handlers answer an error that is no Status (a 500, no reason)."""
        if self.body_problem is None:
            self.body_problem = errors.unknown(message)

    def process(self) -> None:
        """twisted.web's, less what it adds to every response: its ``Server`` header, which
        kube does not send, and a ``Date`` formatted anew each time (~1% of a request);
        and less its unquoted path segments, which only Klein's routes read."""
        self.site = self.channel.site  # type: ignore[attr-defined]  # set by Site
        self.responseHeaders.setRawHeaders(b"date", [_http_date()])
        if self.too_many_fields:  # Go's HTTP/2 server answers these, before any handler
            self._go_answer(431, b"text/html; charset=utf-8", H2_TOO_MANY_FIELDS)
            return
        if self.h2_bad_request:
            self.setHeader(b"x-content-type-options", b"nosniff")
            self._go_answer(400, b"text/plain; charset=utf-8", self.h2_bad_request)
            return
        self.prepath = []
        self.postpath = []  # the root is a leaf; Klein's routes get the segments (site.py)
        if self.path == b"*" and self.method == b"OPTIONS":
            self._handleStar()  # Go's server answers it so; any other ``*`` is served
            return
        if self.go_path_empty:
            self.path, self.uri = b"", self.uri[1:]
        try:
            self.render(self.site.getResourceFor(self))
        except BaseException:
            self.processingFailed(Failure())

    def _go_answer(self, code: int, content_type: bytes, body: bytes) -> None:
        self.setResponseCode(code)
        self.responseHeaders.setRawHeaders(b"content-type", [content_type])
        self.setHeader(b"content-length", b"%d" % len(body))
        self.write(body)
        self.finish()


_DATE: list[Any] = [None, b""]  # the second last formatted, and its Date


def _http_date() -> bytes:
    second = int(time.time())
    if _DATE[0] != second:
        _DATE[:] = [second, datetimeToString(second)]
    date: bytes = _DATE[1]
    return date


class APISite(Site):
    """No per-request access log: like kube at its default verbosity (it cost ~8% of CPU);
    kube's idle timeout for kept-alive connections rather than Twisted's minute."""

    protocol = h2channel.channel_protocol  # Go's request-head limits, 431 and timeouts

    def __init__(self, resource: Any, http2: bool = True, **kwargs: Any) -> None:
        kwargs.setdefault("timeout", httplimits.IDLE_TIMEOUT)
        # kube reads no form body into a request's parameters: such a body is a 415
        kwargs.setdefault("parsePOSTFormSubmission", False)
        super().__init__(resource, **kwargs)
        self.http2 = http2  # --disable-http2-serving: offer only HTTP/1.1 in ALPN

    def acceptableProtocols(self) -> list[bytes]:
        protocols: list[bytes] = super().acceptableProtocols()
        return protocols if self.http2 else [p for p in protocols if p != b"h2"]

    def log(self, request: Any) -> None:
        return None
