"""Property tests of the upgrade tunnel's reading of a refused upgrade's answer (an
aggregated server's bytes, not to be trusted): a chunked body ends exactly at its end,
however the bytes arrive, and any bytes at all meet no exception."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from platform_api.aggregator.tunnel import BodyEnd

CHUNKED = b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n"
_TOKEN = st.text(alphabet="abcxyz-", min_size=1, max_size=6).map(str.encode)


@st.composite
def chunked_bodies(draw: st.DrawFn) -> bytes:
    body = b""
    for data in draw(st.lists(st.binary(min_size=1, max_size=40), max_size=6)):
        extension = b";" + draw(_TOKEN) if draw(st.booleans()) else b""
        body += b"%x%s\r\n%s\r\n" % (len(data), extension, data)
    trailers = draw(st.lists(_TOKEN, max_size=3))
    return body + b"0\r\n" + b"".join(b"X-" + t + b": 1\r\n" for t in trailers) + b"\r\n"


@given(chunked_bodies(), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_a_chunked_body_ends_at_its_last_byte_however_it_arrives(
    body: bytes, cuts: list[int]
) -> None:
    points = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    pieces = [body[a:b] for a, b in itertools.pairwise(points)]
    end = BodyEnd(400, CHUNKED)
    said = [end.ended(piece) for piece in pieces]
    assert said == [False] * (len(pieces) - 1) + [True]


@given(st.integers(min_value=100, max_value=599), st.binary(max_size=200), st.binary())
def test_any_answer_is_read_without_an_exception(status: int, head: bytes, body: bytes) -> None:
    end = BodyEnd(status, b"HTTP/1.1 " + str(status).encode() + b" X\r\n" + head)
    end.ended(body)
    end.ended(body)
