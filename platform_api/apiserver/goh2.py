"""An HTTP/2 request's header block as Go's server checks it.

RFC 9113 makes a malformed request a stream error: Go resets that stream
(PROTOCOL_ERROR) and serves the connection's others, and answers a request naming an
HTTP/1 connection header with a 400 of its own words.  The h2 library refused all of
them as connection errors (a GOAWAY, every stream on the connection lost, a watch
among them), and a CONNECT, which has no ``:path``, crashed Twisted's request.
``refusal`` judges a header block by Go's rules, in Go's order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from platform_api.apiserver import requestline
from platform_api.apiserver.gohead import BAD_VALUE, TOKEN

RESET = b"reset"  # a stream error: RST_STREAM with PROTOCOL_ERROR
_PSEUDO = {b":method", b":path", b":scheme", b":authority", b":protocol"}
_WIRE_NAME = re.compile(rb"[" + TOKEN + rb"]+")  # a token, no upper case
_CONNECTION = (b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade")
_CANONICAL = {b"connection": "Connection", b"keep-alive": "Keep-Alive"}
_CANONICAL |= {b"proxy-connection": "Proxy-Connection", b"transfer-encoding": "Transfer-Encoding"}
_CANONICAL |= {b"upgrade": "Upgrade"}

Header = tuple[bytes, bytes]


def refusal(headers: Sequence[Header], ended: bool) -> bytes:
    """``RESET``, the text of Go's 400 for the request, or b"" to serve it.
    ``ended``: the header block ended the stream (no body follows)."""
    pseudo: dict[bytes, bytes] = {}
    regular = False
    for name, value in headers:
        if BAD_VALUE.search(value):
            return RESET
        if name.startswith(b":"):
            if regular or name not in _PSEUDO or name in pseudo:
                return RESET
            pseudo[name] = value
        elif not _WIRE_NAME.fullmatch(name):
            return RESET
        else:
            regular = True
    length = declared_length(headers)
    if _malformed(pseudo) or length == -1 or (ended and length):
        return RESET
    return _connection_header(headers)


def _malformed(pseudo: dict[bytes, bytes]) -> bool:
    """Go's newWriterAndRequest: the pseudo-headers a request must (not) have."""
    method, path = pseudo.get(b":method", b""), pseudo.get(b":path", b"")
    scheme, authority = pseudo.get(b":scheme", b""), pseudo.get(b":authority", b"")
    if b":protocol" in pseudo:
        return True  # extended CONNECT is off
    if method == b"CONNECT":
        return bool(path or scheme or not authority)
    if not method or not path or scheme not in (b"https", b"http"):
        return True
    if b"@" in authority:
        return True  # no userinfo in an http(s) authority
    if path != b"*" and not path.startswith(b"/"):
        return True
    try:
        requestline.as_go_reads(method + b" " + path + b" HTTP/1.1")
    except requestline.Refused:
        return True  # no path url.ParseRequestURI reads
    return False


def declared_length(headers: Sequence[Header]) -> int | None:
    """The body's length the header block declares (None: it declares none); -1 for a
    Content-Length Go refuses (not digits, or past 2^63)."""
    for name, value in headers:
        if name == b"content-length":
            return int(value) if value.isdigit() and int(value) < 1 << 63 else -1
    return None


def short_body(declared: int, received: int) -> str:
    """What Go's body reader tells a handler of a stream that ended early."""
    return f"request declared a Content-Length of {declared} but only wrote {received} bytes"


def _connection_header(headers: Sequence[Header]) -> bytes:
    """Go's checkValidHTTP2RequestHeaders: its 400's words, or b""."""
    names = {name for name, _ in headers}
    for name in _CONNECTION:
        if name in names:
            return f'request header "{_CANONICAL[name]}" is not valid in HTTP/2\n'.encode()
    te = [value for name, value in headers if name == b"te"]
    if te and (len(te) > 1 or te[0] not in (b"trailers", b"")):
        return b'request header "TE" may only be "trailers" in HTTP/2\n'
    return b""


def is_connect(headers: Sequence[Header]) -> bool:
    return any(name == b":method" and value == b"CONNECT" for name, value in headers)
