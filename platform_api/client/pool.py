"""A keep-alive connection pool that, as Go's transport, never reuses a connection an
HTTP/1.0 answer did not ask to keep.

twisted.web's client keeps a connection unless the answer says ``Connection: close``;
an HTTP/1.0 server (Python's ``http.server``, a common webhook) closes it after every
answer without saying so.  The next call on the kept connection then fails (``EOF``)
whenever it follows the last closely enough that the close has not been seen, as two
webhooks of one write do.  Go keeps an HTTP/1.0 connection only on ``keep-alive``.

This subclasses twisted.web's client protocol and its pool's factory (private names:
Twisted is pinned, and ``tests/client/test_pool.py`` holds them to their behaviour).
"""

from __future__ import annotations

from typing import Any

from twisted.web._newclient import HTTP11ClientProtocol
from twisted.web.client import HTTPConnectionPool, _HTTP11ClientFactory


class _Http10Closes(HTTP11ClientProtocol):
    def _finishResponse_WAITING(self, rest: bytes) -> None:
        parser = self._parser
        response = getattr(parser, "response", None)
        if parser is not None and response is not None and tuple(response.version[1:]) < (1, 1):
            asked = b",".join(parser.connHeaders.getRawHeaders(b"Connection", ())).lower()
            if b"keep-alive" not in asked:
                parser.connHeaders.addRawHeader(b"Connection", b"close")
        super()._finishResponse_WAITING(rest)


class _Factory(_HTTP11ClientFactory):
    def buildProtocol(self, addr: Any) -> HTTP11ClientProtocol:
        return _Http10Closes(self._quiescentCallback)


class ConnectionPool(HTTPConnectionPool):
    """``HTTPConnectionPool`` (persistent) with Go's HTTP/1.0 rule."""

    _factory = _Factory

    def __init__(self, reactor: Any, keep_alive: int) -> None:
        super().__init__(reactor, persistent=True)
        self.maxPersistentPerHost = keep_alive
