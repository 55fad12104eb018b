"""Go's url.Parse and url.ParseRequestURI: the parts and the error texts."""

from __future__ import annotations

import pytest

from platform_api import gourl


@pytest.mark.parametrize(
    ("url", "scheme", "host", "user", "query", "fragment"),
    [
        ("https://example.com/a?b=c#d", "https", "example.com", None, "b=c", "d"),
        ("HTTPS://u:p@[::1]:8443/", "https", "[::1]:8443", "u:p", "", ""),
        ("https:opaque", "https", "", None, "", ""),
        ("//host/path", "", "host", None, "", ""),
        ("/just/a/path?", "", "", None, "", ""),
        ("dns://localhost:4317", "dns", "localhost:4317", None, "", ""),
        ("https://h/p#a%20b", "https", "h", None, "", "a b"),
    ],
)
def test_parts(url: str, scheme: str, host: str, user: str | None, query: str, fragment: str):
    parsed = gourl.parse(url)
    assert (parsed.scheme, parsed.host, parsed.user, parsed.raw_query, parsed.fragment) == (
        scheme,
        host,
        user,
        query,
        fragment,
    )


def test_paths_keep_their_escaping() -> None:
    parsed = gourl.parse("https://h/a%2Fb/c")
    assert (parsed.path, parsed.raw_path) == ("/a/b/c", "/a%2Fb/c")
    assert gourl.parse("https://h/plain").raw_path == ""
    assert gourl.parse("mailto:someone").opaque == "someone"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("a b:c", 'parse "a b:c": first path segment in URL cannot contain colon'),
        ("https://x\ty", 'parse "https://x\\ty": net/url: invalid control character in URL'),
        ("https://h:+1", 'parse "https://h:+1": invalid port ":+1" after host'),
        ("http://[::1", "parse \"http://[::1\": missing ']' in host"),
        ("http://[::1]x", 'parse "http://[::1]x": invalid port "x" after host'),
        (":x", 'parse ":x": missing protocol scheme'),
        ("https://h/%zz", 'parse "https://h/%zz": invalid URL escape "%zz"'),
        ("https://h/%4", 'parse "https://h/%4": invalid URL escape "%4"'),
        ("https://h%41/", 'parse "https://h%41/": invalid URL escape "%41"'),
        ("https://h{x}/", 'parse "https://h{x}/": invalid character "{" in host name'),
        ("https://u^v@h/", 'parse "https://u^v@h/": net/url: invalid userinfo'),
        # A bad fragment names the whole URL; anything else the URL without it.
        ("https://h/#%zz", 'parse "https://h/#%zz": invalid URL escape "%zz"'),
        ("https://[h/#x", "parse \"https://[h/\": missing ']' in host"),
    ],
)
def test_errors(url: str, message: str) -> None:
    with pytest.raises(gourl.URLError) as caught:
        gourl.parse(url)
    assert str(caught.value) == message


def test_request_uri() -> None:
    assert gourl.parse_request_uri("https://example.com").host == "example.com"
    assert gourl.parse_request_uri("/a/b").path == "/a/b"
    with pytest.raises(gourl.URLError) as caught:
        gourl.parse_request_uri("unapproved")
    assert str(caught.value) == 'parse "unapproved": invalid URI for request'
    with pytest.raises(gourl.URLError) as caught:
        gourl.parse_request_uri("")
    assert str(caught.value) == 'parse "": empty url'


def test_unescape_modes() -> None:
    assert gourl.unescape("a+b%20c", gourl.QUERY) == "a b c"
    assert gourl.unescape("a+b%20c", gourl.PATH) == "a+b c"
    assert gourl.unescape("%e2%82%ac", gourl.PATH) == "\u20ac"
    assert gourl.unescape("[fe80::1%25eth0]", gourl.HOST) == "[fe80::1%eth0]"


@pytest.mark.parametrize(
    ("host", "parts"),
    [
        ("example.com:443", ("example.com", "443")),
        ("example.com", ("example.com", "")),
        ("[::1]:80", ("::1", "80")),
        ("[::1]", ("::1", "")),
        ("h:x", ("h:x", "")),
    ],
)
def test_split_host_port(host: str, parts: tuple[str, str]) -> None:
    assert gourl.split_host_port(host) == parts
