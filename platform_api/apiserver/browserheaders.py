"""Headers for browsers: kube's WithHSTS and WithCORS filters.

``--strict-transport-security-directives`` puts ``Strict-Transport-Security`` on every
answer.  ``--cors-allowed-origins`` (regular expressions) lets pages of those origins
call the API: a request whose ``Origin`` matches gets kube's ``Access-Control-*``
headers, and its preflight (``OPTIONS``) is answered 204 there and then, before
authentication, as kube's filter sits outside it; another origin is served as if it
had sent none (the browser then refuses the answer to the page).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from platform_api.apiserver.flagvalues import ConfigError

_HSTS_INVALID = (
    "--strict-transport-security-directives invalid, allowed values: max-age=expireTime, "
    "includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for "
    "more information"
)
_CORS_HELP = (
    "List of allowed origins for CORS, comma separated. An allowed origin can be a regular "
    "expression to support subdomain matching. If this list is empty CORS will not be "
    "enabled. Please ensure each expression matches the entire hostname by anchoring to "
    "the start with '^' or including the '//' prefix, and by anchoring to the end with '$' "
    "or including the ':' port separator suffix. Examples of valid expressions are "
    "'//example\\.com(:|$)' and '^https://example\\.com(:|$)'"
)
_METHODS = b"POST, GET, OPTIONS, PUT, DELETE, PATCH"
SetHeader = Callable[[bytes, bytes], None]  # request.setHeader
_HEADERS = (
    b"Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, "
    b"X-Requested-With, If-Modified-Since"
)


def hsts_value(directives: tuple[str, ...]) -> bytes | None:
    """The header's value for --strict-transport-security-directives, checked in kube's
    words (None: no header)."""
    problems = []
    for directive in directives:
        if not directive.strip():
            problems.append("empty value in strict-transport-security-directives")
        elif directive not in ("includeSubDomains", "preload"):
            parts = directive.split("=")
            if len(parts) != 2 or parts[0] != "max-age":
                problems.append(_HSTS_INVALID)
    if problems:
        raise ConfigError(_aggregate(problems))
    return "; ".join(directives).encode() if directives else None


def cors_patterns(origins: tuple[str, ...]) -> tuple[str, ...]:
    """--cors-allowed-origins, checked as kube checks them: each compiles and is pinned
    to the start and the end of the origin's host (CVE-2022-1996)."""
    problems = []
    for origin in origins:
        if not origin:
            problems.append(f"empty value in --cors-allowed-origins, help: {_CORS_HELP}")
            continue
        try:
            re.compile(origin)
        except re.error as e:
            why = f"error parsing regexp: {e}"
        else:
            pinned = ("^" in origin or "//" in origin) and ("$" in origin or ":" in origin)
            if pinned:
                continue
            why = "regular expression does not pin to start/end of host in the origin header"
        problems.append(
            f"--cors-allowed-origins has an invalid regular expression: {why}, help: {_CORS_HELP}"
        )
    if problems:
        raise ConfigError(_aggregate(problems))
    return origins


def _aggregate(problems: list[str]) -> str:
    """apimachinery's error aggregate: one as it is, several bracketed."""
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


@dataclass(frozen=True)
class BrowserHeaders:
    hsts: bytes | None
    origins: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, directives: tuple[str, ...], origins: tuple[str, ...]) -> BrowserHeaders | None:
        """None when neither flag is set: no filter at all."""
        if not directives and not origins:
            return None
        return cls(hsts_value(directives), tuple(re.compile(o) for o in cors_patterns(origins)))

    def apply(self, method: bytes, origin: bytes | None, set_header: SetHeader) -> bool:
        """Set the headers; True when the request is a preflight now answered (204)."""
        if self.hsts is not None:
            set_header(b"Strict-Transport-Security", self.hsts)
        if not origin or not self.origins:
            return False
        text = origin.decode("utf-8", "replace")
        if not any(pattern.search(text) for pattern in self.origins):
            return False
        set_header(b"Access-Control-Allow-Origin", origin)
        set_header(b"Access-Control-Allow-Methods", _METHODS)
        set_header(b"Access-Control-Allow-Headers", _HEADERS)
        set_header(b"Access-Control-Expose-Headers", b"Date")
        set_header(b"Access-Control-Allow-Credentials", b"true")
        return method == b"OPTIONS"
