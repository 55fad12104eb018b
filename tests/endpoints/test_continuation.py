"""Continue tokens that are not ours get kube-apiserver v1.36's words (recorded against it
with the same tokens; its version string is meta.k8s.io/v1, ours the branded one)."""

from __future__ import annotations

import base64

import pytest

from platform_api.endpoints import continuation
from platform_api.errors import StatusError

V = continuation.TOKEN_VERSION


def token(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("!!!", "illegal base64 data at input byte 0"),
        ("YWJjZ", "illegal base64 data at input byte 4"),
        ("YWJj=", "illegal base64 data at input byte 4"),
        ("YW.Jj", "illegal base64 data at input byte 2"),
        (token("abc"), "invalid character 'a' looking for beginning of value"),
        (token(""), "unexpected end of JSON input"),
        (token("[1]"), "json: cannot unmarshal array into Go value of type storage.continueToken"),
        (
            token('{"v":5}'),
            "json: cannot unmarshal number into Go struct field continueToken.v of type string",
        ),
        (
            token(f'{{"v":"{V}","rv":"1"}}'),
            "json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
        ),
        (
            token(f'{{"v":"{V}","rv":1.5}}'),
            "json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64",
        ),
        (
            token(f'{{"v":"{V}","rv":true}}'),
            "json: cannot unmarshal bool into Go struct field continueToken.rv of type int64",
        ),
        (token('{"v":"x","rv":1,"start":"a"}'), "server does not recognize this encoded version x"),
        (token('{"rv":1}'), "server does not recognize this encoded version "),
        (
            token(f'{{"v":"{V}","rv":0,"start":"a"}}'),
            f"incorrect encoded start resourceVersion (version {V})",
        ),
        (token(f'{{"v":"{V}","rv":1}}'), f"encoded start key empty (version {V})"),
        (token(f'{{"v":"{V}","rv":1,"start":""}}'), f"encoded start key empty (version {V})"),
        # A start key path.Clean would change: it could climb out of its list.
        (token(f'{{"v":"{V}","rv":1,"start":"../x"}}'), "../x"),
        (token(f'{{"v":"{V}","rv":1,"start":"x/../y"}}'), "x/../y"),
        (token(f'{{"v":"{V}","rv":1,"start":"a//b"}}'), "a//b"),
        (token(f'{{"v":"{V}","rv":1,"start":"//a"}}'), "//a"),
        (token(f'{{"v":"{V}","rv":1,"start":"./a"}}'), "./a"),
        (token(f'{{"v":"{V}","rv":1,"start":"a/"}}'), "a/"),
    ],
)
def test_refused_tokens(raw: str, problem: str) -> None:
    with pytest.raises(StatusError) as raised:
        continuation.decode(raw)
    assert (raised.value.code, raised.value.reason) == (400, "BadRequest")
    assert raised.value.message == f"invalid continue token: continue key is not valid: {problem}"


def test_own_tokens_round_trip() -> None:
    assert continuation.decode(continuation.encode(7, "default/cm\x00")) == (7, "default/cm\x00")


@pytest.mark.parametrize(
    ("start", "read"),
    [("a\x00", "a\x00"), ("/a", "a"), ("/", ""), ("b/x\x00", "b/x\x00"), ("zz", "zz")],
)
def test_start_keys_kube_takes(start: str, read: str) -> None:
    """What kube joins to the list's prefix: the key, rooted and cleaned, less its root."""
    raw = token(f'{{"v":"{V}","rv":-1,"start":"{start}"}}'.replace("\x00", "\\u0000"))
    assert continuation.decode(raw) == (-1, read)
