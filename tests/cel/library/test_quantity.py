"""kube's quantity library (cases of k8s.io/apiserver library/quantity_test.go)."""

from __future__ import annotations

import pytest

from platform_api.cel.library.quantity import FORMAT_WRONG, parse_quantity
from tests.cel.conftest import compile_error, run, runtime_error


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ('isQuantity("20")', True),
        ('isQuantity("20M")', True),
        ('isQuantity("20Mi")', True),
        ('isQuantity("20Mo")', False),
        ('isQuantity("10Mm")', False),
        ('quantity("200M") == quantity("200M")', True),
        ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
        ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M")', True),
        ('quantity("200M") == quantity("0.3G")', False),
        ('quantity("50M").isLessThan(quantity("50Mi"))', True),
        ('quantity("50M").isLessThan(quantity("100M"))', True),
        ('quantity("100M").isLessThan(quantity("50M"))', False),
        ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
        ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
        ('quantity("50M").isGreaterThan(quantity("100M"))', False),
        ('quantity("200M").compareTo(quantity("0.2G"))', 0),
        ('quantity("50M").compareTo(quantity("50Mi"))', -1),
        ('quantity("50Mi").compareTo(quantity("50M"))', 1),
        ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
        ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
        ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
        ('quantity("50k").sub(20) == quantity("49980")', True),
        ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
        ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
        ('quantity("50k").asInteger()', 50000),
        ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
        ('quantity("50").isInteger()', True),
        ('quantity("50.703k").asApproximateFloat()', 50703.0),
        ('sign(quantity("-1"))', -1),
        ('sign(quantity("0"))', 0),
        ('sign(quantity("1m"))', 1),
        ('quantity("12Mi") == quantity("12582912")', True),
    ],
)
def test_quantity(expr: str, value: object) -> None:
    assert run(expr) == value


def test_quantity_errors() -> None:
    assert runtime_error('quantity("10Mo") == quantity("1")') == FORMAT_WRONG
    assert runtime_error('quantity("10Mm") == quantity("1")') == "unable to parse quantity's suffix"
    assert (
        runtime_error('quantity("9999999999999999999999999999999999999G").asInteger() == 1')
        == "cannot convert value to integer"
    )
    assert "found no matching overload for 'isQuantity' applied to '(list(int))'" in compile_error(
        "isQuantity([1, 2, 3])"
    )


def test_parse_rounds_up_to_nano_and_caps_binary() -> None:
    assert str(parse_quantity("1.0000000001")) == "1.000000001"
    assert parse_quantity("-1n") < 0
    assert parse_quantity("100Ei") == (1 << 63) - 1
    assert parse_quantity("1e3") == 1000
    assert parse_quantity(".5") == parse_quantity("500m")
