"""Documents served as Go's http.ServeContent serves them: the answers are the reference
kube-apiserver's to the same headers on /openapi/v3/apis/apps/v1."""

from __future__ import annotations

import pytest
from twisted.web.test.requesthelper import DummyRequest

from platform_api.endpoints.servecontent import http_date, serve_content

BODY = b'{"openapi":"3.0.0","info":{}}'
ETAG = '"6262CD"'
MODIFIED = 1796578572.0  # Sun, 06 Dec 2026 17:36:12 GMT


def serve(method: bytes = b"GET", **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = DummyRequest([b""])
    request.method = method
    for name, value in headers.items():
        request.requestHeaders.setRawHeaders(name.replace("_", "-"), [value])
    body = serve_content(request, BODY, b"application/json", MODIFIED, {"etag": ETAG})
    answered = {
        name.decode().lower(): b",".join(values).decode()
        for name, values in request.responseHeaders.getAllRawHeaders()
    }
    answered.pop("cache-control", None)
    return request.responseCode, answered, body


def test_the_whole_document_names_its_version_and_takes_ranges() -> None:
    assert serve() == (
        200,
        {
            "content-type": "application/json",
            "etag": ETAG,
            "last-modified": "Sun, 06 Dec 2026 17:36:12 GMT",
            "accept-ranges": "bytes",
            "content-length": str(len(BODY)),
        },
        BODY,
    )
    assert http_date(MODIFIED) == "Sun, 06 Dec 2026 17:36:12 GMT"


@pytest.mark.parametrize(
    "headers",
    [
        {"If_None_Match": ETAG},
        {"If_None_Match": f'"other", W/{ETAG}'},  # weak comparison
        {"If_None_Match": "*"},
        {"If_Modified_Since": "Sun, 06 Dec 2026 17:36:12 GMT"},
        {"If_Modified_Since": "Sunday, 06-Dec-26 17:40:00 GMT"},  # RFC 850
        {"If_Modified_Since": "Sun Dec  6 17:36:12 2026"},  # ANSI C
    ],
)
def test_an_unchanged_document_is_not_sent_again(headers: dict[str, str]) -> None:
    """A 304 with the ETag (and no date beside it), no media type and no size."""
    assert serve(**headers) == (304, {"etag": ETAG}, b"")


@pytest.mark.parametrize(
    "headers",
    [
        {"If_None_Match": '"other"'},
        {"If_None_Match": '"other"', "If_Modified_Since": "Sun, 06 Dec 2026 17:40:00 GMT"},
        {"If_Modified_Since": "Sun, 06 Dec 2026 17:36:11 GMT"},
        {"If_Modified_Since": "not a date"},
        {"If_Match": ETAG},
        {"If_Unmodified_Since": "Sun, 06 Dec 2026 17:36:12 GMT"},
    ],
)
def test_a_changed_document_or_a_met_condition_is_sent_whole(headers: dict[str, str]) -> None:
    assert serve(**headers)[:1] == (200,)


@pytest.mark.parametrize(
    "headers",
    [
        {"If_Match": '"other"'},
        {"If_Match": f"W/{ETAG}"},  # If-Match compares strongly
        {"If_Unmodified_Since": "Sun, 06 Dec 2026 17:36:11 GMT"},
    ],
)
def test_a_failed_precondition_is_a_412(headers: dict[str, str]) -> None:
    assert serve(**headers) == (
        412,
        {
            "content-type": "application/json",
            "etag": ETAG,
            "last-modified": "Sun, 06 Dec 2026 17:36:12 GMT",
            "content-length": "0",
        },
        b"",
    )


def test_if_none_match_on_another_method_is_a_412() -> None:
    assert serve(b"POST", If_None_Match=ETAG)[0] == 412


@pytest.mark.parametrize(
    ("wanted", "part", "content_range"),
    [
        ("bytes=0-9", BODY[:10], "bytes 0-9/29"),
        ("bytes=20-", BODY[20:], "bytes 20-28/29"),
        ("bytes=-4", BODY[-4:], "bytes 25-28/29"),
        ("bytes=-100", BODY, "bytes 0-28/29"),
        ("bytes=5-1000", BODY[5:], "bytes 5-28/29"),
        ("bytes= 0-1 , ,", BODY[:2], "bytes 0-1/29"),
        ("bytes=-0", b"", "bytes 29-28/29"),  # Go's: an empty part
    ],
)
def test_one_range_is_a_206(wanted: str, part: bytes, content_range: str) -> None:
    code, headers, body = serve(Range=wanted)
    assert (code, headers["content-range"], body) == (206, content_range, part)
    assert headers["content-length"] == str(len(part))


def test_several_ranges_are_multipart_byteranges() -> None:
    code, headers, body = serve(Range="bytes=0-3,10-12")
    boundary = headers["content-type"].removeprefix("multipart/byteranges; boundary=")
    assert (code, len(boundary)) == (206, 60)
    assert (
        body
        == (
            f"--{boundary}\r\nContent-Range: bytes 0-3/29\r\nContent-Type: application/json\r\n\r\n"
            f'{{"op\r\n--{boundary}\r\nContent-Range: bytes 10-12/29\r\n'
            f'Content-Type: application/json\r\n\r\n:"3\r\n--{boundary}--\r\n'
        ).encode()
    )


def test_ranges_larger_than_the_document_send_it_whole() -> None:
    assert serve(Range="bytes=0-20,5-25")[:1] == (200,)


@pytest.mark.parametrize(
    ("condition", "code"),
    [(ETAG, 206), ('"other"', 200), (f"W/{ETAG}", 200), ("Sun, 06 Dec 2026 17:36:12 GMT", 206)],
)
def test_if_range_keeps_the_range_only_for_this_version(condition: str, code: int) -> None:
    assert serve(Range="bytes=0-1", If_Range=condition)[0] == code


def test_a_range_past_the_end_is_a_416() -> None:
    assert serve(Range="bytes=99999999-") == (
        416,
        {
            "content-type": "text/plain; charset=utf-8",
            "content-range": "bytes */29",
            "x-content-type-options": "nosniff",
            "content-length": "33",
        },
        b"invalid range: failed to overlap\n",
    )


@pytest.mark.parametrize(
    "wanted", ["pages=1", "bytes=5", "bytes=5-1", "bytes=x-1", "bytes=--1", "bytes=1-x"]
)
def test_a_malformed_range_is_a_416(wanted: str) -> None:
    code, headers, body = serve(Range=wanted)
    assert (code, body) == (416, b"invalid range\n")
    assert "etag" not in headers and "content-range" not in headers
