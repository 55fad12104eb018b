"""Go's time.ParseDuration and Duration.String, word for word: the cases and answers
were recorded from Go 1.25's time package (the reference server's toolchain)."""

from __future__ import annotations

import pytest

from platform_api.goduration import (
    format_duration,
    parse_duration,
    parse_openapi_duration,
    seconds_duration,
)

SECOND = 1_000_000_000


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_100, "1.1\u00b5s"),
        (2_200_000, "2.2ms"),
        (500_000_000, "500ms"),
        (SECOND, "1s"),
        (1_500_000_000, "1.5s"),
        (90 * SECOND, "1m30s"),
        (3600 * SECOND, "1h0m0s"),
        (3661 * SECOND + 1, "1h1m1.000000001s"),
        (-90 * SECOND, "-1m30s"),
        (100 * 3600 * SECOND, "100h0m0s"),
    ],
)
def test_duration_text_is_go_s(nanos: int, text: str) -> None:
    assert format_duration(nanos) == text
    assert parse_duration(text) == nanos


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1.5h", 5400 * SECOND),
        ("1h30m", 5400 * SECOND),
        ("-1.5s", -1_500_000_000),
        ("+5s", 5 * SECOND),
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("1\u00b5s", 1000),
        ("1\u03bcs", 1000),
        ("1us", 1000),
        ("9223372036854775807ns", 9223372036854775807),
        ("-9223372036854775808ns", -9223372036854775808),
        ("1.0000000000000000000001s", SECOND),
        ("2562047h", 9223369200000000000),
        ("1.s", SECOND),
        (".5s", 500_000_000),
        ("0.0000000001s", 0),
        ("-.5h", -1_800_000_000_000),
        ("5m0s", 300 * SECOND),
    ],
)
def test_what_go_accepts(text: str, nanos: int) -> None:
    assert parse_duration(text) == nanos


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1e400s", 'time: unknown unit "e" in duration "1e400s"'),
        ("9999999999h", 'time: invalid duration "9999999999h"'),
        ("1", 'time: missing unit in duration "1"'),
        ("", 'time: invalid duration ""'),
        ("-", 'time: invalid duration "-"'),
        ("+", 'time: invalid duration "+"'),
        (".s", 'time: invalid duration ".s"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
        ("2562048h", 'time: invalid duration "2562048h"'),
        ("1s1", 'time: missing unit in duration "1s1"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        ("1\x00s", 'time: unknown unit "\\x00s" in duration "1\\x00s"'),
        ("1 s", 'time: unknown unit " s" in duration "1 s"'),
        (" 1s", 'time: invalid duration " 1s"'),
        ("1..5s", 'time: missing unit in duration "1..5s"'),
        ("99999999999999999999ns", 'time: invalid duration "99999999999999999999ns"'),
        ("1h-1m", 'time: unknown unit "h-" in duration "1h-1m"'),
        ("1H", 'time: unknown unit "H" in duration "1H"'),
        ("1e3s", 'time: unknown unit "e" in duration "1e3s"'),
        ("\udcffs", 'time: invalid duration "\\xffs"'),  # a byte that is not UTF-8
        ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
        ('1"', 'time: unknown unit "\\"" in duration "1\\""'),
    ],
)
def test_what_go_refuses_in_its_words(text: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)
    assert str(refused.value) == message


def test_durations_as_kube_openapi_parses_them() -> None:
    assert parse_openapi_duration("1h30m") == 5400 * 10**9
    assert parse_openapi_duration("1.5s") == 1_500_000_000
    assert parse_openapi_duration("3 days") == 3 * 86400 * 10**9
    assert parse_openapi_duration("2 weeks") == 14 * 86400 * 10**9
    assert parse_openapi_duration("nope") is None
    assert parse_openapi_duration("1 hours 20 min") == 80 * 60 * 10**9
    assert parse_openapi_duration("99999999999999999999 s") is None  # strconv.Atoi errs


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [
        (0, 0),
        (-5, -5_000_000_000),
        (9223372036, 9_223_372_036_000_000_000),
        # Past int64 nanoseconds the product wraps, as Go's does: kube's watch timer is
        # then negative (fires at once) or, for -1<<63 seconds, zero (the default).
        (9223372037, 9_223_372_037_000_000_000 - 2**64),
        (2**63 - 1, -1_000_000_000),
        (-(2**63), 0),
    ],
)
def test_seconds_duration_wraps_as_go_multiplication(seconds: int, nanos: int) -> None:
    assert seconds_duration(seconds) == nanos
