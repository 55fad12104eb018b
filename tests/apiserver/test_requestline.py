"""Request lines and queries as Go's net/http reads them (answers recorded from
kube-apiserver v1.36: tests/e2e/test_request_lines.py sends them to the server)."""

from __future__ import annotations

import pytest

from platform_api.apiserver.requestline import (
    VERSION_NOT_SUPPORTED,
    Refused,
    as_go_reads,
    query_args,
)


@pytest.mark.parametrize(
    ("line", "read", "empty_path"),
    [
        (b"GET /api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET /api HTTP/1.0", b"GET /api HTTP/1.0", False),
        (b"GET /api HTTP/1.2", b"GET /api HTTP/1.1", False),  # any HTTP/1 minor is HTTP/1
        (b"GET https://h:6443/api?x=1 HTTP/1.1", b"GET /api?x=1 HTTP/1.1", False),
        (b"GET HTTPS://u:p@h:/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET https://[::1]:6443/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET https://[fe80::1%25en0]/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET https://x_y!/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET https://\xc3\xa9/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        (b"GET https:/api HTTP/1.1", b"GET /api HTTP/1.1", False),  # no authority
        (b"GET https:///api HTTP/1.1", b"GET /api HTTP/1.1", False),  # an empty one
        (b"GET h+t.t-p://h/api HTTP/1.1", b"GET /api HTTP/1.1", False),
        # an absolute URI without a path: Go's path is empty (its mux's 404 page)
        (b"GET HTTP://h HTTP/1.1", b"GET / HTTP/1.1", True),
        (b"GET http://h?x HTTP/1.1", b"GET /?x HTTP/1.1", True),
        (b"GET https:// HTTP/1.1", b"GET / HTTP/1.1", True),
        (b"GET mailto:x HTTP/1.1", b"GET / HTTP/1.1", True),
        (b"GET https: HTTP/1.1", b"GET / HTTP/1.1", True),
        (b"OPTIONS * HTTP/1.1", b"OPTIONS * HTTP/1.1", False),
        (b"GET * HTTP/1.1", b"GET * HTTP/1.1", False),
        (b"GET //h/api HTTP/1.1", b"GET //h/api HTTP/1.1", False),  # a path, no authority
        (b"GET /a/\xc3\xa9 HTTP/1.1", b"GET /a/%C3%A9 HTTP/1.1", False),
        (b"GET /a/\xff HTTP/1.1", b"GET /a/%FF HTTP/1.1", False),
        (b"GET /a?l=%ZZ HTTP/1.1", b"GET /a?l=%ZZ HTTP/1.1", False),  # the query stays raw
        (b"GET /a#f HTTP/1.1", b"GET /a#f HTTP/1.1", False),  # Go keeps it in the path
        # not request lines at all: Twisted refuses them as Go does
        (b"GET /api", b"GET /api", False),
        (b"GET /api HTTP/3", b"GET /api HTTP/3", False),
        (b"GET /a b HTTP/1.1", b"GET /a b HTTP/1.1", False),
    ],
)
def test_the_line_twisted_reads_is_the_one_go_reads(
    line: bytes, read: bytes, empty_path: bool
) -> None:
    assert as_go_reads(line) == (read, empty_path)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (b"GET /api HTTP/2.0", VERSION_NOT_SUPPORTED),
        (b"GET /api HTTP/0.9", VERSION_NOT_SUPPORTED),
        (b"GET ?a=b HTTP/1.1", b"400 Bad Request"),
        (b"GET api HTTP/1.1", b"400 Bad Request"),
        (b"GET /a%ZZ HTTP/1.1", b"400 Bad Request"),
        (b"GET /a% HTTP/1.1", b"400 Bad Request"),
        (b"GET https://h/a%2 HTTP/1.1", b"400 Bad Request"),
        (b"GET :x/api HTTP/1.1", b"400 Bad Request"),  # missing protocol scheme
        (b"GET 1http://h/api HTTP/1.1", b"400 Bad Request"),  # no scheme: no absolute path
        (b"GET /a\x01b HTTP/1.1", b"400 Bad Request"),  # a control byte
        # hosts Go cannot parse
        (b"GET https://h:abc/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://h:1:2/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://::1/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://[::1/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://[::1]:x/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://h%41/api HTTP/1.1", b"400 Bad Request"),  # an escaped ASCII byte
        (b"GET https://h#f HTTP/1.1", b"400 Bad Request"),
        (b"GET https://h`/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://h{/api HTTP/1.1", b"400 Bad Request"),
        (b"GET https://u^@h/api HTTP/1.1", b"400 Bad Request"),  # nor its user info
    ],
)
def test_lines_go_refuses(line: bytes, answer: bytes) -> None:
    with pytest.raises(Refused) as refused:
        as_go_reads(line)
    assert refused.value.answer == answer


@pytest.mark.parametrize(
    ("query", "args"),
    [
        (b"", {}),
        (b"verbose", {b"verbose": [b""]}),
        (b"a=1&a=2&&b=", {b"a": [b"1", b"2"], b"b": [b""]}),
        (b"l=a%3Db+c", {b"l": [b"a=b c"]}),
        (b"l=%ZZ&limit=5", {b"limit": [b"5"]}),
        (b"%zz=1&x=%", {}),
        (b"a=1;b=2&c=3", {b"c": [b"3"]}),
        (b"n=%FF", {b"n": [b"\xff"]}),
    ],
)
def test_a_query_reads_as_go_parses_it(query: bytes, args: dict[bytes, list[bytes]]) -> None:
    assert query_args(query) == args
