"""kube's HSTS and CORS filters: the flags' checks in kube's words, the headers set."""

from __future__ import annotations

import pytest

from platform_api.apiserver.browserheaders import BrowserHeaders, cors_patterns, hsts_value
from platform_api.apiserver.flagvalues import ConfigError

INVALID_HSTS = (
    "--strict-transport-security-directives invalid, allowed values: max-age=expireTime, "
    "includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for "
    "more information"
)


def test_hsts_directives() -> None:
    assert hsts_value(()) is None
    assert hsts_value(("max-age=31536000", "includeSubDomains", "preload")) == (
        b"max-age=31536000; includeSubDomains; preload"
    )
    for bad in (("fakevalue", "preload"), ("max-age",), ("max-age=1=2",)):
        with pytest.raises(ConfigError) as caught:
            hsts_value(bad)
        assert str(caught.value) == INVALID_HSTS
    with pytest.raises(ConfigError) as caught:
        hsts_value(("x", "max-age"))
    assert str(caught.value) == f"[{INVALID_HSTS}, {INVALID_HSTS}]"


def test_cors_origins_must_pin_the_host() -> None:
    assert cors_patterns(("//example\\.com(:|$)", "^https://a\\.io$")) == (
        "//example\\.com(:|$)",
        "^https://a\\.io$",
    )
    with pytest.raises(ConfigError) as caught:
        cors_patterns(("example\\.com",))
    assert str(caught.value).startswith(
        "--cors-allowed-origins has an invalid regular expression: regular expression does "
        "not pin to start/end of host in the origin header, help: List of allowed origins"
    )
    with pytest.raises(ConfigError) as caught:
        cors_patterns(("^https://(a$",))
    assert str(caught.value).startswith(
        "--cors-allowed-origins has an invalid regular expression: error parsing regexp: "
    )


def test_headers_of_an_allowed_origin_and_its_preflight() -> None:
    browser = BrowserHeaders.of(("max-age=60",), ("//example\\.com(:|$)",))
    assert browser is not None
    headers: dict[bytes, bytes] = {}
    assert browser.apply(b"OPTIONS", b"https://example.com", headers.__setitem__) is True
    assert headers == {
        b"Strict-Transport-Security": b"max-age=60",
        b"Access-Control-Allow-Origin": b"https://example.com",
        b"Access-Control-Allow-Methods": b"POST, GET, OPTIONS, PUT, DELETE, PATCH",
        b"Access-Control-Allow-Headers": b"Content-Type, Content-Length, Accept-Encoding, "
        b"X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since",
        b"Access-Control-Expose-Headers": b"Date",
        b"Access-Control-Allow-Credentials": b"true",
    }
    headers.clear()
    assert browser.apply(b"GET", b"https://example.com.evil.io", headers.__setitem__) is False
    assert headers == {b"Strict-Transport-Security": b"max-age=60"}
    assert BrowserHeaders.of((), ()) is None
