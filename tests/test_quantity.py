"""apimachinery's Quantity text: what kube writes back for a quantity."""

from __future__ import annotations

import pytest

from platform_api.quantity import BINARY_SI, DECIMAL_SI, canonical, format_quantity, parse


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("2000m", "2"),
        ("1.5", "1500m"),
        ("1024Mi", "1Gi"),
        ("0.5Gi", "512Mi"),
        ("1.5Ki", "1536"),
        ("1000", "1k"),
        ("1000000", "1M"),
        ("1.5G", "1500M"),
        ("100m", "100m"),
        ("500m", "500m"),
        ("3Ki", "3Ki"),
        ("1e3", "1e3"),
        ("12e-1", "1200e-3"),
        ("-1500m", "-1500m"),
        ("0.0", "0"),
        ("0.1", "100m"),
    ],
)
def test_canonical_text(text: str, written: str) -> None:
    assert canonical(text) == written


def test_formats_and_rounding() -> None:
    assert parse("1Gi").format == BINARY_SI
    assert parse("0.0001Ki").format == DECIMAL_SI  # below one: decimal
    assert str(parse("0.5Ki")) == "512"  # below 1024: printed as a plain number
    assert format_quantity(parse("1Mi").value + parse("1Mi").value, BINARY_SI) == "2Mi"
    q = parse("0.0000000001")  # below a nano: rounded up to one
    assert (str(q), q.milli_value(), q.int_value()) == ("1n", 1, 1)
