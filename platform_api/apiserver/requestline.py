"""The request line as Go's net/http reads it, before Twisted parses it.

Twisted takes HTTP/1.0 and 1.1 only, refuses raw bytes past ASCII in the target, and
takes any target at all; Go (kube-apiserver's server) differs each way, and a client
sees the difference:

- ``HTTP/1.2`` is HTTP/1 to Go (``HTTP/1.1`` is answered); ``HTTP/2.0`` and ``HTTP/0.9``
  are well formed but not HTTP/1: 505.  ``HTTP/3`` is no version: 400.
- the target is ``url.ParseRequestURI``'s: an absolute path, ``*``, or an absolute URI
  whose path is then the request's (``GET https://host/api``, as proxies send it; a
  host Go cannot parse is a 400).  An absolute URI with no path (``https://host``,
  ``mailto:x``) has an empty path, which kube's mux answers with its 404 page.
  Anything else (``?a=b``, ``api``) and a path with a ``%`` that is no escape (``/a%ZZ``)
  is a 400.  The query is not checked here: Go keeps it raw; nor is a ``#``, which Go
  keeps in the path.
- bytes past ASCII in the target are taken as they are, as if %-encoded.
- the query's pairs are Go's (``query_args``).
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

VERSION_NOT_SUPPORTED = b"505 HTTP Version Not Supported: unsupported protocol version"
BAD_REQUEST = b"400 Bad Request"
_VERSION = re.compile(rb"HTTP/(\d)\.(\d)")
_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:")
_HOST_BYTE = re.compile(
    rb"[A-Za-z0-9!$&'()*+,;=:\[\]<>\"\-_.~\x80-\xff]|%[89A-Fa-f][0-9A-Fa-f]|%25"
)
_USERINFO = re.compile(rb"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*")
_PORT = re.compile(rb"(:[0-9]*)?")
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_HIGH = re.compile(rb"[\x80-\xff]")
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


class Refused(ValueError):
    """The request line is refused with ``answer`` (a status line's text, which Go also
    writes as the body)."""

    def __init__(self, answer: bytes) -> None:
        super().__init__(answer)
        self.answer = answer


class Read(NamedTuple):
    """The request line for Twisted, and whether Go's path is empty (Twisted needs
    one: the line has ``/``, and the request is served with none)."""

    line: bytes
    empty_path: bool = False


def as_go_reads(line: bytes) -> Read:
    """The request line Twisted should parse in place of ``line``, or ``line`` itself
    when it is no request line at all (Twisted refuses it, as Go does)."""
    parts = line.split(b" ")
    if len(parts) != 3:
        return Read(line)
    method, target, version = parts
    matched = _VERSION.fullmatch(version)
    if matched is None:
        return Read(line)
    if matched.group(1) != b"1":
        raise Refused(VERSION_NOT_SUPPORTED)
    if version not in (b"HTTP/1.0", b"HTTP/1.1"):
        version = b"HTTP/1.1"
    if _CONTROL.search(target):
        raise Refused(BAD_REQUEST)
    target = _HIGH.sub(lambda m: b"%%%02X" % m.group()[0], target)
    if target == b"*":
        return Read(line)
    target, empty = _origin_form(target)
    return Read(b" ".join((method, target, version)), empty)


def _origin_form(target: bytes) -> tuple[bytes, bool]:
    """``url.ParseRequestURI``'s path and query of ``target``, and whether the path is
    empty; Refused (400) where Go's parse fails."""
    scheme = _SCHEME.match(target)
    rest = target[scheme.end() :] if scheme else target
    if target.startswith(b":"):
        raise Refused(BAD_REQUEST)  # "missing protocol scheme"
    path, mark, query = rest.partition(b"?")
    if not path.startswith(b"/"):
        if scheme is None:
            raise Refused(BAD_REQUEST)
        return b"/" + mark + query, True  # an opaque URI (``mailto:x``): no path
    if scheme is not None and path.startswith(b"//"):
        authority, slash, after = path[2:].partition(b"/")
        _check_authority(authority)
        path = slash + after
    if _BAD_ESCAPE.search(path):
        raise Refused(BAD_REQUEST)
    return (path or b"/") + mark + query, not path


def _check_authority(authority: bytes) -> None:
    """Go's parseAuthority: user info of its characters, then a host of reg-name
    bytes (or a bracketed IPv6 address), a port of digits after its first colon."""
    userinfo, at, host = authority.rpartition(b"@")
    if at and not _USERINFO.fullmatch(userinfo):
        raise Refused(BAD_REQUEST)
    if host.startswith(b"["):
        end = host.rfind(b"]")
        if end < 0 or not _PORT.fullmatch(host[end + 1 :]):
            raise Refused(BAD_REQUEST)
        host = host[1:end]
    else:
        colon = host.find(b":")
        if colon >= 0 and not _PORT.fullmatch(host[colon:]):
            raise Refused(BAD_REQUEST)
    if len(_HOST_BYTE.sub(b"", host)):
        raise Refused(BAD_REQUEST)


def query_args(query: bytes) -> dict[bytes, list[bytes]]:
    """The query's parameters as Go's ``url.ParseQuery`` reads them: bare keys
    (``?verbose``) kept; a pair holding a ``;``, or a ``%`` that is no escape, dropped
    (Python's parse_qs kept both as text: ``labelSelector=%ZZ`` was a selector Go never
    sees)."""
    args: dict[bytes, list[bytes]] = {}
    for pair in query.split(b"&"):
        if not pair or b";" in pair or _BAD_ESCAPE.search(pair):
            continue
        key, _, value = pair.partition(b"=")
        args.setdefault(_unescape(key), []).append(_unescape(value))
    return args


def _unescape(text: bytes) -> bytes:
    return unquote_to_bytes(text.replace(b"+", b" "))
