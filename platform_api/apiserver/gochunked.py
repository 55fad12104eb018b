"""A chunked request body read as Go's net/http reads one.

kube-apiserver's handlers read a body as it arrives; when Go's chunked reader
(net/http/internal/chunked.go, and textproto for the trailer) cannot read it, the
handler answers its error as a Status 500 with the reader's words ("invalid byte in
chunk length") and the server closes the connection.  Twisted's decoder reads a
different grammar (no more than 1 KiB a size line, a bare LF taken, a size with more
than 16 hex digits taken, a bad trailer line taken) and refuses with a plain 400.
This decoder keeps Twisted's interface (``dataReceived``) and Go's grammar, and hands
the error to ``failed`` instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable

from platform_api.apiserver.gohead import BAD_VALUE, NAME
from platform_api.gotext import quote_bytes

MAX_LINE = 4096  # Go's connection reader: a size line with its CRLF must fit in it
MAX_EXCESS = 16 * 1024  # chunk overhead beyond 16 bytes + twice the data, in all
MAX_TRAILER_VALUES = 500  # net/http's DefaultMaxHeaderValueCount
_HEX = frozenset(b"0123456789abcdefABCDEF")
_OWS = b" \t"


class ChunkError(ValueError):
    """What Go's reader returns for a body it cannot read; str() is its message."""


class GoChunkedBody:
    """Twisted's transfer-decoder interface: ``data`` gets each piece of the body,
    ``finished`` the bytes after its end, ``failed`` Go's message for a body it cannot
    read (after which nothing more is read)."""

    def __init__(
        self,
        data: Callable[[bytes], None],
        finished: Callable[[bytes], None],
        failed: Callable[[str], None],
    ) -> None:
        self._data = data
        self._finished = finished
        self._failed = failed
        self._buffer = b""
        self._left = 0  # bytes of the current chunk still to come
        self._excess = 0  # Go's tally of overhead: it refuses a sender that is mostly that
        self._state: Callable[[], bool] | None = self._size_line

    def dataReceived(self, data: bytes) -> None:
        if self._state is None:
            return  # ended, or failed: the rest is not read
        self._buffer += data
        try:
            while self._state is not None and self._state():
                pass
        except ChunkError as e:
            self._state, self._buffer = None, b""
            self._failed(str(e))

    def noMoreData(self) -> None:
        """The connection ended: the body is cut short unless it ended."""
        if self._state is not None:
            self._state = None
            self._failed("unexpected EOF")

    def _size_line(self) -> bool:
        end = self._buffer.find(b"\n", 0, MAX_LINE)
        if end < 0:
            if len(self._buffer) >= MAX_LINE:
                raise ChunkError("header line too long")
            return False
        line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
        cr = line.find(b"\r")
        if cr < 0:
            raise ChunkError("chunked line ends with bare LF")
        if cr != len(line) - 2:
            raise ChunkError("invalid CR in chunked line")
        self._excess += len(line)
        size = hex_size(line[:-2].rstrip(_OWS).partition(b";")[0])
        self._excess = max(self._excess - 16 - 2 * size, 0)
        if size == 0:  # the last chunk: Go does not count its overhead
            self._state = self._trailer
        elif self._excess > MAX_EXCESS:
            raise ChunkError("chunked encoding contains too much non-data")
        else:
            self._left, self._state = size, self._chunk_data
        return True

    def _chunk_data(self) -> bool:
        if not self._buffer:
            return False
        piece = self._buffer[: self._left]
        self._buffer = self._buffer[len(piece) :]
        self._left -= len(piece)
        if self._left == 0:
            self._state = self._chunk_end
        self._data(piece)
        return True

    def _chunk_end(self) -> bool:
        if len(self._buffer) < 2:
            return False
        if not self._buffer.startswith(b"\r\n"):
            raise ChunkError("malformed chunked encoding")
        self._buffer, self._state = self._buffer[2:], self._size_line
        return True

    def _trailer(self) -> bool:
        """Go reads a trailer only when a blank line follows within its reader's 4 KiB."""
        if len(self._buffer) < 2:
            return False
        if self._buffer.startswith(b"\r\n"):
            taken = 2
        elif self._buffer.find(b"\r\n\r\n", 0, MAX_LINE) >= 0:
            taken = trailer_length(self._buffer)
        elif len(self._buffer) >= MAX_LINE:
            raise ChunkError("http: suspiciously long trailer after chunked body")
        else:
            return False
        rest, self._buffer, self._state = self._buffer[taken:], b"", None
        self._finished(rest)
        return False


def hex_size(text: bytes) -> int:
    """A chunk's size as Go's parseHexUint reads it: hex digits only, at most 16."""
    if not text:
        raise ChunkError("empty hex number for chunk length")
    for i, byte in enumerate(text):
        if byte not in _HEX:
            raise ChunkError("invalid byte in chunk length")
        if i == 16:
            raise ChunkError("http chunk length too large")
    return int(text, 16)


def trailer_length(data: bytes) -> int:
    """How many bytes of ``data`` the trailer takes through its blank line, read as
    textproto's ``readMIMEHeader`` reads header lines; ChunkError for one it refuses.
    ``data`` holds a blank line, so every line read here is whole."""
    if data[:1] in (b" ", b"\t"):
        line, _ = _line(data, 0)
        if len(line) > 80:  # Go quotes at most this much of the line, else refuses it
            raise ChunkError("message too large")
        raise ChunkError(f"malformed MIME header initial line: {quote_bytes(line)}")
    pos, values = 0, 0
    while True:
        line, pos = _line(data, pos)
        if not line:
            return pos
        if b":" not in line:
            raise ChunkError(f"malformed MIME header: missing colon: {quote_bytes(line)}")
        field = line.strip(b" \t\r\n")
        while data[pos : pos + 1] in (b" ", b"\t"):  # continuation lines, joined by a space
            while data[pos : pos + 1] in (b" ", b"\t"):
                pos += 1
            more, pos = _line(data, pos)
            field += b" " + more.strip(b" \t\r\n")
        key, _, value = field.partition(b":")
        if not NAME.fullmatch(key) or BAD_VALUE.search(value):
            raise ChunkError(f"malformed MIME header line: {quote_bytes(field)}")
        values += 1
        if values > MAX_TRAILER_VALUES:
            raise ChunkError("message too large")


def _line(data: bytes, pos: int) -> tuple[bytes, int]:
    """The line at ``pos`` without its LF or CRLF, and where the next one starts."""
    end = data.find(b"\n", pos)
    if end < 0:
        end = len(data)
    line = data[pos:end]
    return (line[:-1] if line.endswith(b"\r") else line), end + 1
