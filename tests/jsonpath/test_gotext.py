"""Go's printing of decoded JSON values (texts checked against Go's fmt and encoding/json)."""

from __future__ import annotations

import pytest

from platform_api.gotext import quote
from platform_api.jsonpath import NO_VALUE, marshal, sprint
from platform_api.jsonpath.gotext import format_float, go_type, marshal_indent


@pytest.mark.parametrize(
    ("value", "printed", "json"),
    [
        (0.0, "0", "0"),
        (-0.0, "-0", "-0"),
        (1.0, "1", "1"),
        (2.5, "2.5", "2.5"),
        (123456.0, "123456", "123456"),
        (1e6, "1e+06", "1000000"),
        (1234567.0, "1.234567e+06", "1234567"),
        (0.0001, "0.0001", "0.0001"),
        (1e-5, "1e-05", "0.00001"),
        (1e-6, "1e-06", "0.000001"),
        (1.5e-7, "1.5e-07", "1.5e-7"),
        (1e20, "1e+20", "100000000000000000000"),
        (1e21, "1e+21", "1e+21"),
        (1 / 3, "0.3333333333333333", "0.3333333333333333"),
        (5e-324, "5e-324", "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e+308"),
        (-20.01, "-20.01", "-20.01"),
    ],
)
def test_floats(value: float, printed: str, json: str) -> None:
    assert format_float(value) == printed
    assert format_float(value, json=True) == json


def test_sprint_is_fmt_print() -> None:
    value = {"b": [1, None, "x y", 2.5e6], "a": {"c": True}, "e": {}, "d": []}
    assert sprint(value) == "map[a:map[c:true] b:[1 <nil> x y 2.5e+06] d:[] e:map[]]"
    assert sprint("verbatim") == "verbatim"
    assert sprint(None) == "<nil>"
    assert sprint(NO_VALUE) == "<invalid reflect.Value>"
    assert sprint(7) == "7"
    assert sprint(False) == "false"


def test_marshal_is_encoding_json() -> None:
    value = {"z": 1, "\u00e9": [True, None], "A": "<&>\u2028\n\x01\x7f", "a": {}}
    assert marshal(value) == (
        '{"A":"\\u003c\\u0026\\u003e\\u2028\\n\\u0001\x7f","a":{},"z":1,"\u00e9":[true,null]}'
    )
    assert marshal("\ud800") == '"\ufffd"'
    assert marshal(NO_VALUE) == "null"
    assert marshal_indent({"a": [1, {}], "b": []}) == (
        '{\n    "a": [\n        1,\n        {}\n    ],\n    "b": []\n}'
    )


def test_go_types() -> None:
    assert [go_type(v) for v in ({}, [], "", 1, 1.0, True, None)] == [
        "map[string]interface {}",
        "[]interface {}",
        "string",
        "int64",
        "float64",
        "bool",
        "interface {}",
    ]


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("abc", '"abc"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("a\x00b\n", '"a\\x00b\\n"'),
        ("\x01\x7f\x80", '"\\x01\\x7f\\u0080"'),
        ("\u00a0é日本😀", '"\\u00a0é日本😀"'),
        ("<&>\u2028", '"<&>\\u2028"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
)
def test_quote_is_go_strconv_quote(text: str, quoted: str) -> None:
    """Checked against Go's ``%q``: control characters as \\x, other unprintable runes as
    \\u or \\U, printable ones (HTML characters too) as they are."""
    assert quote(text) == quoted
