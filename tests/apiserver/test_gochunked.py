"""The chunked body decoder reads Go's grammar and fails with Go's words.  Each message
was recorded from kube-apiserver v1.36 (the reference build) for the same bytes."""

from __future__ import annotations

import pytest

from platform_api.apiserver.gochunked import MAX_LINE, GoChunkedBody

BODY = b'{"kind":"ConfigMap"}'


class Reader:
    def __init__(self) -> None:
        self.data = b""
        self.rest: bytes | None = None
        self.errors: list[str] = []
        self.decoder = GoChunkedBody(self._data, self._finished, self.errors.append)

    def _data(self, piece: bytes) -> None:
        assert self.rest is None and not self.errors
        self.data += piece

    def _finished(self, rest: bytes) -> None:
        assert self.rest is None
        self.rest = rest

    def feed(self, wire: bytes, step: int = 0) -> Reader:
        for i in range(0, len(wire), step or len(wire) or 1):
            self.decoder.dataReceived(wire[i : i + (step or len(wire))])
        return self


def chunk(data: bytes, size: bytes | None = None) -> bytes:
    return (b"%x" % len(data) if size is None else size) + b"\r\n" + data + b"\r\n"


READABLE = [
    chunk(BODY) + b"0\r\n\r\n",
    chunk(BODY[:5]) + chunk(BODY[5:]) + b"0\r\n\r\n",
    chunk(BODY, b"%X" % len(BODY)) + b"0\r\n\r\n",  # upper-case digits
    chunk(BODY, b"%016x" % len(BODY)) + b"0\r\n\r\n",  # 16 digits: Go's most
    chunk(BODY, b"%x \t " % len(BODY)) + b"0\r\n\r\n",  # trailing blanks
    chunk(BODY, b'%x; a = "b c"' % len(BODY)) + b"0\r\n\r\n",  # an extension, not read
    chunk(BODY) + b"0;last\r\n\r\n",
    chunk(BODY) + b"0\r\nX-A: b\r\n  c\r\nX B: d\r\nX-C: \xff\r\n\r\n",  # a trailer Go takes
    chunk(BODY) + b"0\r\n" + b"a:\r\n" * 500 + b"\r\n",  # 500 trailer values
    chunk(BODY) + b"0\r\nX-A: " + b"y" * (MAX_LINE - 13) + b"\r\n\r\n",  # just fits
    # overhead of 4000 bytes on the last chunk, which Go does not count
    chunk(BODY) + b"0;" + b"e" * 4000 + b"\r\n\r\n",
    # a size line of 4094 bytes and its CRLF fill Go's reader exactly
    chunk(BODY, b"%x;" % len(BODY) + b"a" * (MAX_LINE - 2 - 3)) + b"0\r\n\r\n",
]


@pytest.mark.parametrize("wire", READABLE)
@pytest.mark.parametrize("step", [0, 1, 7])
def test_bodies_go_reads(wire: bytes, step: int) -> None:
    reader = Reader().feed(wire + b"GET / HTTP/1.1\r\n", step)
    assert reader.errors == []
    assert reader.data == BODY
    if step == 0:
        assert reader.rest == b"GET / HTTP/1.1\r\n"  # the next request, handed back


def test_data_after_the_end_is_the_callers() -> None:
    reader = Reader().feed(chunk(BODY) + b"0\r\n\r\n", 1)
    assert reader.rest == b""
    reader.feed(b"more")  # the decoder has ended: not read as body
    assert reader.data == BODY and reader.errors == []


UNREADABLE = [
    (b"zz\r\n", "invalid byte in chunk length"),
    (b"-5\r\n", "invalid byte in chunk length"),
    (b"+14\r\n", "invalid byte in chunk length"),
    (b"0x14\r\n", "invalid byte in chunk length"),
    (b"14\x00\r\n", "invalid byte in chunk length"),
    (b"14 ;a\r\n", "invalid byte in chunk length"),  # blanks are trimmed before `;` only
    (b"0" * 16 + b"z\r\n", "invalid byte in chunk length"),
    (b"0" * 17 + b"\r\n", "http chunk length too large"),
    (b"fffffffffffffffffff\r\n", "http chunk length too large"),
    (b"\r\n", "empty hex number for chunk length"),
    (b";ext\r\n", "empty hex number for chunk length"),
    (b"14\n", "chunked line ends with bare LF"),
    (b"14\r\r\n", "invalid CR in chunked line"),
    (b"14\rx\r\n", "invalid CR in chunked line"),
    (b"1" * MAX_LINE, "header line too long"),
    (b"14;" + b"a" * (MAX_LINE - 4) + b"\r\n", "header line too long"),
    (b"%x\r\n" % len(BODY) + BODY + b"XX", "malformed chunked encoding"),
    (b"%x\r\n" % len(BODY) + BODY + b"\n0\r\n\r\n", "malformed chunked encoding"),
    (
        chunk(BODY) + b"0\r\nbad trailer\r\n\r\n",
        'malformed MIME header: missing colon: "bad trailer"',
    ),
    (chunk(BODY) + b"0\r\n X: y\r\n\r\n", 'malformed MIME header initial line: " X: y"'),
    (chunk(BODY) + b"0\r\n X: " + b"y" * 100 + b"\r\n\r\n", "message too large"),
    (chunk(BODY) + b"0\r\nX(Y: z\r\n\r\n", 'malformed MIME header line: "X(Y: z"'),
    (chunk(BODY) + b"0\r\n: z\r\n\r\n", 'malformed MIME header line: ": z"'),
    (chunk(BODY) + b"0\r\nX: a\x01b\r\n\r\n", 'malformed MIME header line: "X: a\\x01b"'),
    (chunk(BODY) + b"0\r\nX\xc3\xa9: y\r\n\r\n", 'malformed MIME header line: "X\u00e9: y"'),
    (chunk(BODY) + b"0\r\n" + b"a:\r\n" * 501 + b"\r\n", "message too large"),
    (
        chunk(BODY) + b"0\r\nX: " + b"y" * 5000 + b"\r\n\r\n",
        "http: suspiciously long trailer after chunked body",
    ),
    (
        b"".join(chunk(BODY[i : i + 1], b"1;" + b"e" * 100) for i in range(len(BODY)))
        + b"".join(chunk(b"x", b"1;" + b"e" * 100) for _ in range(200)),
        "chunked encoding contains too much non-data",
    ),
]


@pytest.mark.parametrize(("wire", "message"), UNREADABLE)
@pytest.mark.parametrize("step", [0, 1])
def test_bodies_go_cannot_read(wire: bytes, message: str, step: int) -> None:
    reader = Reader().feed(wire, step)
    assert reader.errors == [message]
    assert reader.rest is None
    reader.feed(b"0\r\n\r\n")  # nothing more is read once it failed
    assert reader.errors == [message] and reader.rest is None


def test_an_overhead_below_go_s_allowance_is_read() -> None:
    """Go allows 16 bytes of overhead a chunk and twice its data: one byte a chunk with
    a 12-byte extension stays within it however many there are."""
    wire = b"".join(chunk(b"x", b"1;" + b"e" * 12) for _ in range(5000)) + b"0\r\n\r\n"
    reader = Reader().feed(wire, 4096)
    assert reader.errors == [] and reader.data == b"x" * 5000


def test_a_body_cut_off_is_unexpected_eof() -> None:
    reader = Reader().feed(b"%x\r\n" % len(BODY) + BODY[:3])
    reader.decoder.noMoreData()
    assert reader.errors == ["unexpected EOF"]
    ended = Reader().feed(chunk(BODY) + b"0\r\n\r\n")
    ended.decoder.noMoreData()
    assert ended.errors == []
