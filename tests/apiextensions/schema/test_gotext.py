"""Go's rendering and comparison of JSON values (values printed by a Go probe)."""

from __future__ import annotations

import pytest

from platform_api.apiextensions.schema.gotext import (
    bad_value,
    deep_equal,
    format_float,
    go_json,
    json_float,
)
from platform_api.validation.field import invalid


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (1.5, "1.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1e20, "1e+20"),
        (1e21, "1e+21"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5, "-2.5"),
    ],
)
def test_format_float_is_go_percent_v(value: float, expected: str) -> None:
    assert format_float(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.0, "1"), (1e6, "1000000"), (1e20, "100000000000000000000"), (1e21, "1e+21"),
     (1e-7, "1e-7"), (0.000001, "0.000001")],
)  # fmt: skip
def test_json_float_is_go_encoding_json(value: float, expected: str) -> None:
    assert json_float(value) == expected


def test_go_json_sorts_keys_and_escapes_html() -> None:
    assert go_json({"b": [1, 2.0, "<a>"], "a": None}) == '{"a":null,"b":[1,2,"\\u003ca\\u003e"]}'


def test_deep_equal_keeps_go_types_apart() -> None:
    assert deep_equal({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not deep_equal(1, 1.0)
    assert not deep_equal(True, 1)
    assert not deep_equal({"a": 1}, {"a": 1, "b": 2})


def test_bad_value_renders_floats_and_objects_as_go() -> None:
    assert str(invalid("f", bad_value(2.0), "d")) == "f: Invalid value: 2: d"
    assert (
        str(invalid("f", bad_value({"b": 1.0, "a": 1}), "d"))
        == 'f: Invalid value: {"a":1,"b":1}: d'
    )
