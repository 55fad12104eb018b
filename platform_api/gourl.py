"""Go's ``net/url`` parser: what kube accepts as a URL, and its error texts.

kube validates webhook URLs, the API approval annotation, CEL's ``url()`` and the
tracing endpoint with ``url.Parse`` or ``url.ParseRequestURI``; Python's urllib accepts
and splits differently and has no errors to speak of.  ``parse`` gives the parts Go's
``URL`` holds, or ``URLError`` with Go's text (``parse "x": missing ']' in host``).
"""

from __future__ import annotations

from dataclasses import dataclass

from platform_api.gotext import quote as go_quote

HOST, PATH, QUERY, FRAGMENT, USER = "host", "path", "query", "fragment", "user"
_HEX = frozenset("0123456789abcdefABCDEF")
# What a host may hold unescaped besides letters and digits (Go's shouldEscape, encodeHost).
_HOST_CHARS = frozenset("-_.~!$&'()*+,;=:[]<>\"")
_USER_CHARS = frozenset("-._:~!$&'()*+,;=%@")


class URLError(ValueError):
    """The URL does not parse; the text is Go's."""


@dataclass
class GoURL:
    """The parts of Go's ``URL``: ``user`` is None without an ``@``; ``raw_path`` is set
    only where the path was escaped otherwise than Go would escape it."""

    scheme: str = ""
    opaque: str = ""
    user: str | None = None
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""
    fragment: str = ""


def parse(raw: str) -> GoURL:
    """``url.Parse``: the fragment split off first."""
    text, _, fragment = raw.partition("#")
    try:
        url = _parse(text, via_request=False)
    except URLError as e:
        raise URLError(f"parse {go_quote(text)}: {e}") from None
    try:
        url.fragment = unescape(fragment, FRAGMENT)
    except URLError as e:
        raise URLError(f"parse {go_quote(raw)}: {e}") from None
    return url


def parse_request_uri(raw: str) -> GoURL:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, no fragment."""
    try:
        return _parse(raw, via_request=True)
    except URLError as e:
        raise URLError(f"parse {go_quote(raw)}: {e}") from None


def unescape(text: str, mode: str) -> str:
    """Go's ``unescape``: ``%XX`` decoded (``+`` is a space in a query), malformed
    escapes refused, and a host's odd ASCII characters refused."""
    plus = False
    for i, char in enumerate(text):
        if char == "%":
            chunk = text[i : i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                raise URLError(f"invalid URL escape {go_quote(chunk)}")
            if mode == HOST and int(chunk[1], 16) < 8 and chunk != "%25":
                raise URLError(f"invalid URL escape {go_quote(chunk)}")
        elif char == "+":
            plus = plus or mode == QUERY
        elif mode == HOST and char.isascii() and not char.isalnum() and char not in _HOST_CHARS:
            raise URLError(f"invalid character {go_quote(char)} in host name")
    if "%" not in text and not plus:
        return text
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
            continue
        out += b" " if char == "+" and mode == QUERY else char.encode()
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def split_host_port(host: str) -> tuple[str, str]:
    """``URL.Hostname()`` and ``URL.Port()``: brackets off an IPv6 literal."""
    colon = host.rfind(":")
    port = ""
    if colon != -1 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _scheme(raw: str) -> tuple[str, str]:
    for i, char in enumerate(raw):
        if char.isascii() and char.isalpha():
            continue
        if char.isascii() and (char.isdigit() or char in "+-."):
            if i == 0:
                return "", raw
            continue
        if char == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _valid_port(colon_port: str) -> bool:
    return colon_port == "" or (
        colon_port[0] == ":" and all(c in "0123456789" for c in colon_port[1:])
    )


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        if not _valid_port(host[end + 1 :]):
            raise URLError(f"invalid port {go_quote(host[end + 1 :])} after host")
    elif (colon := host.rfind(":")) != -1 and not _valid_port(host[colon:]):
        raise URLError(f"invalid port {go_quote(host[colon:])} after host")
    return unescape(host, HOST)


def _parse(raw: str, via_request: bool) -> GoURL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    url = GoURL()
    if raw == "*":
        url.path = "*"
        return url
    scheme, rest = _scheme(raw)
    url.scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if url.scheme:
            url.opaque = rest
            return url
        if via_request:
            raise URLError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (url.scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        at = authority.rfind("@")
        url.host = _parse_host(authority[at + 1 :])
        if at >= 0:
            userinfo = authority[:at]
            if any(c.isascii() and not c.isalnum() and c not in _USER_CHARS for c in userinfo):
                raise URLError("net/url: invalid userinfo")
            url.user = unescape(userinfo, USER)
    url.path = unescape(rest, PATH)
    url.raw_path = rest if rest != url.path else ""
    return url
