"""The request line as Go's net/http reads it, before Twisted parses it.

Twisted takes HTTP/1.0 and 1.1 only, refuses raw bytes past ASCII in the target, and
takes any target at all; Go (kube-apiserver's server) differs each way, and a client
sees the difference:

- ``HTTP/1.2`` is HTTP/1 to Go (``HTTP/1.1`` is answered); ``HTTP/2.0`` and ``HTTP/0.9``
  are well formed but not HTTP/1: 505.  ``HTTP/3`` is no version: 400.
- the target is ``url.ParseRequestURI``'s: an absolute path, ``*``, or an absolute URI
  whose path is then the request's (``GET https://host/api``, as proxies send it).
  Anything else (``?a=b``, ``api``) and a path with a ``%`` that is no escape (``/a%ZZ``)
  is a 400.  The query is not checked here: Go keeps it raw.
- bytes past ASCII in the target are taken as they are, as if %-encoded.
- the query's pairs are Go's (``query_args``).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

VERSION_NOT_SUPPORTED = b"505 HTTP Version Not Supported: unsupported protocol version"
_VERSION = re.compile(rb"HTTP/(\d)\.(\d)")
_ABSOLUTE = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_HIGH = re.compile(rb"[\x80-\xff]")


class Refused(ValueError):
    """The request line is refused with ``answer`` (a status line's text, which Go also
    writes as the body)."""

    def __init__(self, answer: bytes) -> None:
        super().__init__(answer)
        self.answer = answer


def as_go_reads(line: bytes) -> bytes:
    """The request line Twisted should parse in place of ``line``, or ``line`` itself
    when it is no request line at all (Twisted refuses it, as Go does)."""
    parts = line.split(b" ")
    if len(parts) != 3:
        return line
    method, target, version = parts
    matched = _VERSION.fullmatch(version)
    if matched is None:
        return line
    if matched.group(1) != b"1":
        raise Refused(VERSION_NOT_SUPPORTED)
    if version not in (b"HTTP/1.0", b"HTTP/1.1"):
        version = b"HTTP/1.1"
    target = _HIGH.sub(lambda m: b"%%%02X" % m.group()[0], target)
    if target != b"*":
        target = _origin_form(target)
    return b" ".join((method, target, version))


def _origin_form(target: bytes) -> bytes:
    absolute = _ABSOLUTE.match(target)
    if absolute is not None:
        target = target[absolute.end() :]
        if not target.startswith(b"/"):
            # ``https://host``: Go's path is empty, and its mux answers its 404 page;
            # Twisted takes no empty target, so this one is served as ``/``.
            target = b"/" + target
    elif not target.startswith(b"/"):
        raise Refused(b"400 Bad Request")
    path = target.partition(b"?")[0]
    if _BAD_ESCAPE.search(path):
        raise Refused(b"400 Bad Request")
    return target


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
