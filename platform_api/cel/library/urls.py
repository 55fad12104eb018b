"""kube's URL library: ``url()``, ``isURL()`` and the getters, with Go's net/url semantics.

``url(s)`` accepts what Go's ``url.ParseRequestURI`` accepts (an absolute URI or an absolute
path), and the getters read what ``url.Parse`` builds; errors carry Go's texts, e.g.
``URL parse error during conversion from string: parse "x": invalid URI for request``.
"""

from __future__ import annotations

import functools
from typing import Any

from platform_api import gourl
from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class
from platform_api.gourl import GoURL, URLError, parse_request_uri

URL = library_class("kubernetes.URL")


@functools.lru_cache(maxsize=256)
def parse_url(raw: str) -> GoURL:
    return gourl.parse(raw)


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


_PATH_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~$&+,/:;=@")


def _escape_path(path: str) -> str:
    return "".join(c if c in _PATH_SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in path)


def escaped_path(url: GoURL) -> str:
    if url.raw_path and _unescape_ok(url.raw_path) == url.path:
        return url.raw_path
    if url.path == "*":
        return "*"
    return _escape_path(url.path)


def _unescape_ok(raw: str) -> str | None:
    try:
        return gourl.unescape(raw, gourl.PATH)
    except URLError:
        return None


def query(url: GoURL) -> dict[str, list[str]]:
    """Go's url.ParseQuery, ignoring malformed pairs as URL.Query() does."""
    result: dict[str, list[str]] = {}
    for pair in url.raw_query.split("&"):
        if pair == "" or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key = gourl.unescape(key, gourl.QUERY)
            value = gourl.unescape(value, gourl.QUERY)
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
                _getter(lambda p: gourl.split_host_port(p.host)[0]),
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
                _getter(lambda p: gourl.split_host_port(p.host)[1]),
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
