"""The Go parsers behind kube's network and time formats.

``ipv6`` is ``net.ParseIP`` (strict: no leading zeros, no zone), ``ipv4`` and ``cidr`` use
k8s.io/utils' "sloppy" copies of the older parser (leading zeros allowed), ``mac`` is
``net.ParseMAC``, ``uri`` is ``url.ParseRequestURI``, ``email`` follows ``mail.ParseAddress``
for the forms people write (``a@b``, ``Name <a@b>``; groups are refused), and ``duration`` is
``time.ParseDuration`` with go-openapi's "3 days" fallback.
"""

from __future__ import annotations

import functools
import re

from platform_api.goduration import parse_openapi_duration

_BIG = 0xFFFFFF


def _dtoi(s: str) -> tuple[int, int, bool]:
    n = i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= _BIG:
            return _BIG, i, False
        i += 1
    return n, i, i > 0


def _xtoi(s: str) -> tuple[int, int, bool]:
    n = i = 0
    while i < len(s) and s[i] in "0123456789abcdefABCDEF":
        n = n * 16 + int(s[i], 16)
        if n >= _BIG:
            return 0, i, False
        i += 1
    return n, i, i > 0


def _ipv4(s: str, sloppy: bool) -> bool:
    parts = s.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if sloppy:
            n, used, ok = _dtoi(part)
            if not ok or used != len(part) or n > 255:
                return False
        elif not re.fullmatch(r"0|[1-9][0-9]{0,2}", part) or int(part) > 255:
            return False
    return True


def _ipv6(s: str, sloppy: bool) -> bool:
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return True
    i = 0
    while i < 16:
        n, c, ok = _xtoi(s)
        if not ok or n > 0xFFFF or (not sloppy and c > 4):
            return False
        if c < len(s) and s[c] == ".":
            if (ellipsis < 0 and i != 12) or i + 4 > 16 or not _ipv4(s, sloppy):
                return False
            s, i = "", i + 4
            break
        i += 2
        s = s[c:]
        if not s:
            break
        if s[0] != ":" or len(s) == 1:
            return False
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                return False
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        return False
    if i < 16:
        return ellipsis >= 0
    return ellipsis < 0


def parse_ip(s: str, sloppy: bool = False) -> bool | None:
    """True for an address ``net.ParseIP`` (or its sloppy copy) accepts, else None."""
    for c in s:
        if c == ".":
            return True if _ipv4(s, sloppy) else None
        if c == ":":
            return True if _ipv6(s, sloppy) else None
    return None


def is_cidr(s: str) -> bool:
    addr, slash, mask = s.partition("/")
    if not slash:
        return False
    bits = 32 if _ipv4(addr, True) else 128 if _ipv6(addr, True) else 0
    n, used, ok = _dtoi(mask)
    return bits > 0 and ok and used == len(mask) and 0 <= n <= bits


def _xtoi2(s: bytes, end: int) -> bool:
    if len(s) > 2 and s[2] != end:
        return False
    return len(s) >= 2 and all(chr(b) in "0123456789abcdefABCDEF" for b in s[:2])


def is_mac(text: str) -> bool:
    s = text.encode()
    if len(s) < 14:
        return False
    if s[2] in b":-":
        n = (len(s) + 1) // 3
        if (len(s) + 1) % 3 or n not in (6, 8, 20):
            return False
        return all(_xtoi2(s[3 * i :], s[2]) for i in range(n))
    if s[4] == ord("."):
        n = 2 * (len(s) + 1) // 5
        if (len(s) + 1) % 5 or n not in (6, 8, 20):
            return False
        return all(
            _xtoi2(s[x : x + 2], 0) and _xtoi2(s[x + 2 :], s[4]) for x in range(0, len(s), 5)
        )
    return False


# -- url.ParseRequestURI ---------------------------------------------------------------

_HOST_OK = frozenset("!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")


def _unescape_ok(s: str, host: bool) -> bool:
    i = 0
    while i < len(s):
        c = s[i]
        if c == "%":
            if i + 2 >= len(s) or not all(h in "0123456789abcdefABCDEF" for h in s[i + 1 : i + 3]):
                return False
            if host and int(s[i + 1], 16) < 8 and s[i : i + 3] != "%25":
                return False
            i += 3
            continue
        if host and c < "\x80" and not (c.isascii() and c.isalnum()) and c not in _HOST_OK:
            return False
        i += 1
    return True


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _parse_host(scheme: str, host: str) -> bool:
    bracket = host.rfind("[")
    if bracket > 0:
        return False
    if bracket == 0:
        close = host.rfind("]")
        if close < 0 or not _valid_port(host[close + 1 :]):
            return False
        inner = host[1:close]
        zone = inner.find("%25")
        address = inner if zone < 0 else inner[:zone]
        if not _unescape_ok(address, True):
            return False
        return ":" in address and _ipv6(address, False)
    first = host.find(":")
    if first >= 0:
        last = host.rfind(":")
        if last != first and scheme not in ("http", "https"):
            first = last
        if not _valid_port(host[first:]):
            return False
    return _unescape_ok(host, True)


def is_request_uri(raw: str) -> bool:
    if raw == "" or any(c < " " or c == "\x7f" for c in raw):
        return False
    if raw == "*":
        return True
    m = re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", raw)
    if raw.startswith(":"):
        return False
    scheme, rest = (raw[: m.end() - 1].lower(), raw[m.end() :]) if m else ("", raw)
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        return scheme != ""
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        user, at, host = authority.rpartition("@")
        if not _parse_host(scheme, host if at else authority):
            return False
        if at and not all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in user):
            return False
        if at and not _unescape_ok(user, False):
            return False
    return _unescape_ok(rest, False)


# -- mail.ParseAddress -------------------------------------------------------------------

_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\U0010ffff]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_QUOTED = r'"(?:[^"\\\r\n]|\\.)+"'
_ADDR_SPEC = rf"(?:{_DOT_ATOM}|{_QUOTED})[ \t]*@[ \t]*(?:{_DOT_ATOM}|\[[^\[\]\\]*\])"
_WORD = rf"(?:{_ATEXT}|\.)+|{_QUOTED}"
_EMAIL = (
    rf"[ \t]*(?:{_ADDR_SPEC}(?:[ \t]*\([^()]*\))?"
    rf"|(?:(?:{_WORD})(?:[ \t]+(?:{_WORD}))*)?[ \t]*<[ \t]*{_ADDR_SPEC}[ \t]*>)[ \t]*"
)


@functools.cache
def _email() -> re.Pattern[str]:
    """Compiled on first use: its full-Unicode classes cost ~30 ms, paid by every start."""
    return re.compile(_EMAIL)


def is_email(value: str) -> bool:
    return _email().fullmatch(value) is not None


# -- time.ParseDuration and go-openapi's fallback -----------------------------------------


def is_duration(s: str) -> bool:
    """strfmt's ``duration``: Go's syntax or ``<count> <unit>`` forms (goduration.py)."""
    return parse_openapi_duration(s) is not None
