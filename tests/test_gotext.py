"""Object JSON with encoding/json's float forms (platform_api/gotext.py)."""

from __future__ import annotations

import orjson
import pytest

from platform_api.gotext import go_floats, object_json, parse_int


@pytest.mark.parametrize(
    ("value", "go"),
    [
        (1.5e-6, b"0.0000015"),
        (1e-6, b"0.000001"),
        (9.99e-6, b"0.00000999"),
        (-2.5e-6, b"-0.0000025"),
        (1e16, b"10000000000000000"),
        (1.5e17, b"150000000000000000"),
        (1e19, b"10000000000000000000"),
        (-1e20, b"-100000000000000000000"),
        (float(12345678901234567890), b"12345678901234567000"),
        # orjson already writes these as Go does:
        (1e-5, b"0.00001"),
        (1e-7, b"1e-7"),
        (1e-60, b"1e-60"),
        (1e21, b"1e+21"),
        (1e160, b"1e+160"),
        (123.5, b"123.5"),
        (5e-324, b"5e-324"),
    ],
)
def test_a_float_is_written_as_go_writes_it(value: float, go: bytes) -> None:
    assert object_json({"v": value}) == b'{"v":' + go + b"}"
    assert object_json([value, value]) == b"[" + go + b"," + go + b"]"


def test_text_that_looks_like_a_float_stays_text() -> None:
    doc = {"s": '1e-6 and 1e+19 "2.5e-6" \\ 3e+17', "k": {"1e+16": 1.5e-6}}
    assert object_json(doc) == (
        b'{"s":"1e-6 and 1e+19 \\"2.5e-6\\" \\\\ 3e+17","k":{"1e+16":0.0000015}}'
    )


def test_json_without_such_floats_is_passed_through_unchanged() -> None:
    data = orjson.dumps({"a": 1, "b": [0.5, 1e-7, 1e21], "c": "text"})
    assert go_floats(data) is data


def test_text_holding_such_exponents_is_passed_through_unchanged() -> None:
    """UIDs often hold ``4e-6``: no number in the document, no substitution over it."""
    data = orjson.dumps({"uid": "3f2e-6b1c-4e-6", "name": "a1e+16", "k": {"9e-6": [1, "2e+17"]}})
    assert go_floats(data) is data


@pytest.mark.parametrize(
    ("value", "go"),
    [
        (1.5e-6, b"0.0000015"),
        ([1, 1e19], b"[1,10000000000000000000]"),
        ({"a": [1e16]}, b'{"a":[10000000000000000]}'),
    ],
)
def test_such_a_number_anywhere_a_value_goes_is_rewritten(value: object, go: bytes) -> None:
    assert object_json(value) == go
    pretty = object_json(value, orjson.OPT_INDENT_2)
    assert orjson.loads(pretty) == orjson.loads(go) and b"e" not in pretty


def test_options_reach_orjson() -> None:
    assert object_json({"v": 1e19}, orjson.OPT_APPEND_NEWLINE) == b'{"v":10000000000000000000}\n'


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1_0", 10),
        ("0x_1F", 31),
        ("0x1_F", 31),
        ("0_7", 7),
        ("0b1_0", 2),
        ("+1_0", 10),
        ("-0x_ff", -255),
        ("0o17", 15),
        ("1_000_000", 1000000),
        ("0X1f", 31),
        ("0B11", 3),
        ("0O7", 7),
        ("00", 0),
        ("-0", 0),
    ],
)
def test_parse_int_base_0_reads_go_literals(text: str, value: int) -> None:
    """strconv.ParseInt(text, 0, 64), answers recorded from Go's strconv."""
    assert parse_int(text, base=0) == value


@pytest.mark.parametrize("text", ["1__0", "_1", "1_", "0x", "0_", "08", "0x_"])
def test_parse_int_base_0_refuses_what_go_refuses(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_int(text, base=0)
    assert str(refused.value) == f'strconv.ParseInt: parsing "{text}": invalid syntax'


def test_parse_int_32_bits() -> None:
    with pytest.raises(ValueError) as refused:
        parse_int("3000000000", base=0, bits=32)
    assert str(refused.value) == 'strconv.ParseInt: parsing "3000000000": value out of range'
    assert parse_int("2147483647", bits=32) == 2147483647
