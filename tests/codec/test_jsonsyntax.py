"""Go's first JSON syntax error, as kube-apiserver v1.36 (Go 1.27) words it.

Every expected message is the reference's answer to the same body sent as a ConfigMap
create (``couldn't get version/kind; json parse error: <message> (<summary>)``), or,
for the v1 scanner kube decodes patches with, as a merge patch of a ConfigMap
(``error decoding patch: <message>``); recorded 2026-12-06.
"""

from __future__ import annotations

import pytest

from platform_api.codec import BodyError, parse_json
from platform_api.codec.jsonsyntax import syntax_error

REFERENCE = [
    (b'{"apiVe', "unexpected end of JSON input"),
    (b'{"a"0}', "invalid character '0' after object key"),
    (b'{"a":"x\x11"}', "invalid character '\\x11' in string"),
    (b'{"a":"\\q"}', "invalid escape sequence `\\q` in string"),
    (b'{"a":"\\u12G4"}', "invalid escape sequence `\\u12G4` in string"),
    (b'{"a":1.x}', "invalid character 'x' in numeric literal"),
    (b'{"a":1ex}', "invalid character 'x' in numeric literal"),
    (b'{"a":01}', "invalid character '1' after object key:value pair"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b'{"a":]', "invalid character ']' looking for beginning of value"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    (b'{"a":tx}', "invalid character 'x' in literal true (expecting 'r')"),
    (b'{"a":"\xc3', "unexpected end of JSON input"),
    (b'{"a":"\xe7"}x', "invalid character 'x' after top-level value"),
    (b'{"a":1}\xc3\xa9', "invalid character 'é' after top-level value"),
    (b"{\xc3\xa9", "invalid character 'é' looking for beginning of object key string"),
    (b'{"a":"\\u00', "unexpected end of JSON input"),
    (b'{"a":"\\ud800\\u12"}', 'invalid escape sequence `\\u12"}` in string'),
    (b'{"a":"\\u', "unexpected end of JSON input"),
    (b'{"a":"x\ty"}', "invalid character '\\t' in string"),
    (b'{"a" : 1 , "b" 2}', "invalid character '2' after object key"),
    (b'{"a":-}', "invalid character '}' in numeric literal"),
    (b'{"a":nulx}', "invalid character 'x' in literal null (expecting 'l')"),
    (b'{"a":1}}', "invalid character '}' after top-level value"),
    (b'{"a":{"b":[1 2]}}', "invalid character '2' after array element"),
    (b'"x', "unexpected end of JSON input"),
    (b'{"a":"b"\x00', "invalid character '\\x00' after object key:value pair"),
    (b'{"a":+1}', "invalid character '+' looking for beginning of value"),
    (b'{"a":.5}', "invalid character '.' looking for beginning of value"),
    (b'{"a":1.5e+}', "invalid character '}' in numeric literal"),
    (b'{"a":\xe2\x80\xa8}', "invalid character '\\u2028' looking for beginning of value"),
    (b'{"a":\x00}', "invalid character '\\x00' looking for beginning of value"),
    (b'{"a":"\\u12', "unexpected end of JSON input"),
    (b'{"a":"\\x"}', "invalid escape sequence `\\x` in string"),
    (b'{"a":\xff}', "invalid character '\\xff' looking for beginning of value"),
    (b'{"a":"b",\xe7}', "invalid character '\\xe7' looking for beginning of object key string"),
    (b'{"a":"\\u 123"}', 'invalid escape sequence "\\\\u 123" in string'),
    (b'{"a":"\\u`123"}', 'invalid escape sequence "\\\\u`123" in string'),
    (b'{"a":1.}', "invalid character '}' in numeric literal"),
    (b'{"a":-01}', "invalid character '1' after object key:value pair"),
    (b'{"a":[}', "invalid character '}' looking for beginning of value"),
    (b"[1}", "invalid character '}' after array element"),
    (b'{"a":"b"]', "invalid character ']' after object key:value pair"),
    (b'{"a":1e5x}', "invalid character 'x' after object key:value pair"),
    (b"\xef\xbb\xbf{}", "invalid character '\\ufeff' looking for beginning of value"),
    (b'{"a":trUe}', "invalid character 'U' in literal true (expecting 'u')"),
    (b'{"a":"\\ud83d\\ude00"}x', "invalid character 'x' after top-level value"),
    (b'{"a":"\\\xe7"}', 'invalid escape sequence "\\\\\\xe7" in string'),
]


REFERENCE_V1 = [
    (b'{"apiVe', "unexpected end of JSON input"),
    (b'{"a"0}', "invalid character '0' after object key"),
    (b'{"a":"x\x11"}', "invalid character '\\x11' in string literal"),
    (b'{"a":"\\q"}', "invalid character 'q' in string escape code"),
    (b'{"a":"\\u12G4"}', "invalid character 'G' in \\u hexadecimal character escape"),
    (b'{"a":1.x}', "invalid character 'x' after decimal point in numeric literal"),
    (b'{"a":1ex}', "invalid character 'x' in exponent of numeric literal"),
    (b'{"a":01}', "invalid character '1' after object key:value pair"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b'{"a":]', "invalid character ']' looking for beginning of value"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    (b'{"a":tx}', "invalid character 'x' in literal true (expecting 'r')"),
    (b'{"a":"\xc3', "unexpected end of JSON input"),
    (b'{"a":"\xe7"}x', "invalid character 'x' after top-level value"),
    (b'{"a":1}\xc3\xa9', "invalid character 'Ã' after top-level value"),
    (b"{\xc3\xa9", "invalid character 'Ã' looking for beginning of object key string"),
    (b'{"a":"\\u00', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"\\ud800\\u12"}', "invalid character '\"' in \\u hexadecimal character escape"),
    (b'{"a":"\\u', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"x\ty"}', "invalid character '\\t' in string literal"),
    (b'{"a" : 1 , "b" 2}', "invalid character '2' after object key"),
    (b'{"a":-}', "invalid character '}' in numeric literal"),
    (b'{"a":nulx}', "invalid character 'x' in literal null (expecting 'l')"),
    (b'{"a":1}}', "invalid character '}' after top-level value"),
    (b'{"a":{"b":[1 2]}}', "invalid character '2' after array element"),
    (b'"x', "unexpected end of JSON input"),
    (b'{"a":"b"\x00', "invalid character '\\x00' after object key:value pair"),
    (b'{"a":+1}', "invalid character '+' looking for beginning of value"),
    (b'{"a":.5}', "invalid character '.' looking for beginning of value"),
    (b'{"a":1.5e+}', "invalid character '}' in exponent of numeric literal"),
    (b'{"a":\xe2\x80\xa8}', "invalid character 'â' looking for beginning of value"),
    (b'{"a":\x00}', "invalid character '\\x00' looking for beginning of value"),
    (b'{"a":"\\u12', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"\\x"}', "invalid character 'x' in string escape code"),
    (b'{"a":\xff}', "invalid character 'ÿ' looking for beginning of value"),
    (b'{"a":"b",\xe7}', "invalid character 'ç' looking for beginning of object key string"),
    (b'{"a":"\\u 123"}', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"\\u`123"}', "invalid character '`' in \\u hexadecimal character escape"),
    (b'{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
    (b'{"a":-01}', "invalid character '1' after object key:value pair"),
    (b'{"a":[}', "invalid character '}' looking for beginning of value"),
    (b"[1}", "invalid character '}' after array element"),
    (b'{"a":"b"]', "invalid character ']' after object key:value pair"),
    (b'{"a":1e5x}', "invalid character 'x' after object key:value pair"),
    (b"\xef\xbb\xbf{}", "invalid character 'ï' looking for beginning of value"),
    (b'{"a":trUe}', "invalid character 'U' in literal true (expecting 'u')"),
    (b'{"a":"\\ud83d\\ude00"}x', "invalid character 'x' after top-level value"),
    (b'{"a":"\\\xe7"}', "invalid character 'ç' in string escape code"),
    (b"nul", "invalid character ' ' in literal null (expecting 'l')"),
    (b'{"a":-', "invalid character ' ' in numeric literal"),
    (b'{"a":1.', "invalid character ' ' after decimal point in numeric literal"),
    (b'{"a":1e', "invalid character ' ' in exponent of numeric literal"),
    (b'{"a":1e+', "invalid character ' ' in exponent of numeric literal"),
    (b'{"a":"\\', "invalid character ' ' in string escape code"),
    (b'{"a":"\\u1', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":t', "invalid character ' ' in literal true (expecting 'r')"),
    (b'{"a":"\xe7', "unexpected end of JSON input"),
    (b"\xef\xbb\xbf{}", "invalid character 'ï' looking for beginning of value"),
    (b'{"a":\xc3\xa9}', "invalid character 'Ã' looking for beginning of value"),
    (b'{"a":"x\x7f\x81"}x', "invalid character 'x' after top-level value"),
]


@pytest.mark.parametrize(("body", "message"), REFERENCE)
def test_first_syntax_error_as_kube_words_it(body: bytes, message: str) -> None:
    assert syntax_error(body) == message
    with pytest.raises(BodyError) as refused:
        parse_json(body)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    "body",
    [b"{}", b' {"a": [1, -0.5e+7, true, false, null, "\\u00e9\\n\\/"]} ', b'"\xff\xfe"', b"0"],
)
def test_valid_json_has_no_syntax_error(body: bytes) -> None:
    assert syntax_error(body) is None


@pytest.mark.parametrize("cut", range(1, 40))
def test_a_body_cut_anywhere_ends_early(cut: int) -> None:
    body = b'{"a": [1.5e3, "x\\u00e9\xc3\xa9", true], "b": null}'[:cut]
    assert syntax_error(body) == "unexpected end of JSON input"


def test_nan_and_infinity_are_refused_where_go_stops() -> None:
    assert syntax_error(b'{"a":NaN}') == "invalid character 'N' looking for beginning of value"
    assert syntax_error(b'{"a":-Infinity}') == "invalid character 'I' in numeric literal"


@pytest.mark.parametrize(("body", "message"), REFERENCE_V1)
def test_first_syntax_error_as_the_v1_scanner_words_it(body: bytes, message: str) -> None:
    assert syntax_error(body, legacy=True) == message
    with pytest.raises(BodyError) as refused:
        parse_json(body, v1_errors=True)
    assert str(refused.value) == message
