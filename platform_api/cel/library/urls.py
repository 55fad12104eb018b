"""kube's URL library: ``url()``, ``isURL()`` and the getters, with Go's net/url semantics.

``url(s)`` accepts what Go's ``url.ParseRequestURI`` accepts (an absolute URI or an absolute
path), and the getters read what ``url.Parse`` builds; errors carry Go's texts, e.g.
``URL parse error during conversion from string: parse "x": invalid URI for request``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class

URL = library_class("kubernetes.URL")
_HEX = "0123456789abcdefABCDEF"


class URLError(ValueError):
    pass


@dataclass
class ParsedURL:
    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _unescape(s: str, mode: str) -> str:
    """Go's url.unescape for hosts and paths (no '+' to space)."""
    if "%" not in s:
        if mode == "host":
            for c in s:
                if c.isascii() and not (c.isalnum() or c in "-._~!$&'()*+,;=:[]<>\"%"):
                    raise URLError(f'invalid character "{c}" in host name')
        return s
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "%":
            chunk = s[i : i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                raise URLError(f'invalid URL escape "{chunk}"')
            out.append(int(chunk[1:], 16))
            i += 3
        else:
            out += s[i].encode()
            i += 1
    return out.decode("utf-8", errors="surrogateescape")


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all(c.isascii() and c.isdigit() for c in port[1:]))


def _parse_host(host: str) -> str:
    if host.startswith("["):
        i = host.rfind("]")
        if i < 0:
            raise URLError("missing ']' in host")
        if not _valid_port(host[i + 1 :]):
            raise URLError(f'invalid port "{host[i + 1 :]}" after host')
    elif (i := host.rfind(":")) != -1 and not _valid_port(host[i:]):
        raise URLError(f'invalid port "{host[i:]}" after host')
    return _unescape(host, "host")


def _parse(raw: str, via_request: bool) -> ParsedURL:
    if any(ord(c) < 0x20 or c == "\x7f" for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    url = ParsedURL()
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
    url.path = _unescape(rest, "path")
    url.raw_path = rest if rest != url.path else ""
    return url


@functools.lru_cache(maxsize=256)
def parse_url(raw: str) -> ParsedURL:
    """Go's url.Parse (fragment split off first); raises URLError with Go's text."""
    try:
        without_fragment = raw.partition("#")[0]
        return _parse(without_fragment, False)
    except URLError as e:
        raise URLError(f'parse "{raw}": {e}') from None


def parse_request_uri(raw: str) -> None:
    try:
        _parse(raw, True)
    except URLError as e:
        raise URLError(f'parse "{raw}": {e}') from None


def to_url(raw: str) -> Any:
    try:
        parse_request_uri(raw)
        parse_url(raw)
    except URLError as e:
        raise EvalError(f"URL parse error during conversion from string: {e}") from None
    return URL(url=raw)


def is_url(raw: str) -> bool:
    try:
        parse_request_uri(raw)
    except URLError:
        return False
    return True


def _split_host_port(host: str) -> tuple[str, str]:
    colon = host.rfind(":")
    port = ""
    if colon != -1 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


_PATH_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~$&+,/:;=@")


def _escape_path(path: str) -> str:
    return "".join(c if c in _PATH_SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in path)


def escaped_path(url: ParsedURL) -> str:
    if url.raw_path and _unescape_ok(url.raw_path) == url.path:
        return url.raw_path
    if url.path == "*":
        return "*"
    return _escape_path(url.path)


def _unescape_ok(raw: str) -> str | None:
    try:
        return _unescape(raw, "path")
    except URLError:
        return None


def query(url: ParsedURL) -> dict[str, list[str]]:
    """Go's url.ParseQuery, ignoring malformed pairs as URL.Query() does."""
    result: dict[str, list[str]] = {}
    for pair in url.raw_query.split("&"):
        if pair == "" or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key = _unescape(key.replace("+", " "), "query")
            value = _unescape(value.replace("+", " "), "query")
        except URLError:
            continue
        result.setdefault(key, []).append(value)
    return result


def _getter(read: Any) -> Any:
    return lambda u: read(parse_url(u.url))


FUNCTIONS = [
    Function("url", [glob("string_to_url", ("string",), "kubernetes.URL", to_url)]),
    Function("isURL", [glob("is_url_string", ("string",), "bool", is_url)]),
    Function(
        "getScheme",
        [
            member("url_get_scheme", ("kubernetes.URL",), "string", _getter(lambda p: p.scheme)),
        ],
    ),
    Function(
        "getHost",
        [
            member("url_get_host", ("kubernetes.URL",), "string", _getter(lambda p: p.host)),
        ],
    ),
    Function(
        "getHostname",
        [
            member(
                "url_get_hostname",
                ("kubernetes.URL",),
                "string",
                _getter(lambda p: _split_host_port(p.host)[0]),
            ),
        ],
    ),
    Function(
        "getPort",
        [
            member(
                "url_get_port",
                ("kubernetes.URL",),
                "string",
                _getter(lambda p: _split_host_port(p.host)[1]),
            ),
        ],
    ),
    Function(
        "getEscapedPath",
        [
            member("url_get_escaped_path", ("kubernetes.URL",), "string", _getter(escaped_path)),
        ],
    ),
    Function(
        "getQuery",
        [
            member(
                "url_get_query", ("kubernetes.URL",), "map(string, list(string))", _getter(query)
            ),
        ],
    ),
]
