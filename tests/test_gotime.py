"""Go's time.Parse for kube's two layouts: what kube-apiserver v1.36 answered for each."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from platform_api import gotime
from platform_api.scheme.decoding import _canonical_time
from platform_api.scheme.gonames import DecodeError

# (value, Time's error, MicroTime as stored, MicroTime's error): each as the reference
# build answered a ConfigMap's deletionTimestamp and a Lease's renewTime (dry runs)
KUBE = [
    (
        "2020-01-01T00:00:00Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    ),
    (
        "2020-01-01t00:00:00z",
        'parsing time "2020-01-01t00:00:00z" as "2006-01-02T15:04:05Z07:00": cannot parse "t00:00:00z" as "T"',
        None,
        'parsing time "2020-01-01t00:00:00z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "t00:00:00z" as "T"',
    ),
    (
        "2020-01-01T00:00:00.5Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00.5Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".5Z" as ".000000"',
    ),
    (
        "2020-13-01T00:00:00Z",
        'parsing time "2020-13-01T00:00:00Z": month out of range',
        None,
        'parsing time "2020-13-01T00:00:00Z": month out of range',
    ),
    (
        "2020-02-30T00:00:00Z",
        'parsing time "2020-02-30T00:00:00Z": day out of range',
        None,
        'parsing time "2020-02-30T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    ),
    (
        "2020-01-32T00:00:00Z",
        'parsing time "2020-01-32T00:00:00Z": day out of range',
        None,
        'parsing time "2020-01-32T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    ),
    (
        "2020-01-01T24:00:00Z",
        'parsing time "2020-01-01T24:00:00Z": hour out of range',
        None,
        'parsing time "2020-01-01T24:00:00Z": hour out of range',
    ),
    (
        "2020-01-01T00:60:00Z",
        'parsing time "2020-01-01T00:60:00Z": minute out of range',
        None,
        'parsing time "2020-01-01T00:60:00Z": minute out of range',
    ),
    (
        "2020-01-01T00:00:60Z",
        'parsing time "2020-01-01T00:00:60Z": second out of range',
        None,
        'parsing time "2020-01-01T00:00:60Z": second out of range',
    ),
    (
        "2020-1-01T00:00:00Z",
        'parsing time "2020-1-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-01T00:00:00Z" as "01"',
        None,
        'parsing time "2020-1-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "1-01T00:00:00Z" as "01"',
    ),
    (
        "20-01-01T00:00:00Z",
        'parsing time "20-01-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "20-01-01T00:00:00Z" as "2006"',
        None,
        'parsing time "20-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "20-01-01T00:00:00Z" as "2006"',
    ),
    (
        "2020-01-01 00:00:00Z",
        'parsing time "2020-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"',
        None,
        'parsing time "2020-01-01 00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse " 00:00:00Z" as "T"',
    ),
    (
        "2020-01-01T00:00:00",
        'parsing time "2020-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00Zjunk",
        'parsing time "2020-01-01T00:00:00Zjunk": extra text: "junk"',
        None,
        'parsing time "2020-01-01T00:00:00Zjunk" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Zjunk" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00+0100",
        'parsing time "2020-01-01T00:00:00+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00+0100" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "+0100" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00+01:00",
        None,
        None,
        'parsing time "2020-01-01T00:00:00+01:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "+01:00" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00+25:00",
        'parsing time "2020-01-01T00:00:00+25:00": time zone offset hour out of range',
        None,
        'parsing time "2020-01-01T00:00:00+25:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "+25:00" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00-00:00",
        None,
        None,
        'parsing time "2020-01-01T00:00:00-00:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "-00:00" as ".000000"',
    ),
    (
        "",
        'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"',
        None,
        'parsing time "" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "" as "2006"',
    ),
    (
        "x",
        'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"',
        None,
        'parsing time "x" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "x" as "2006"',
    ),
    (
        "2020-01-01T00:00:00.Z",
        'parsing time "2020-01-01T00:00:00.Z" as "2006-01-02T15:04:05Z07:00": cannot parse ".Z" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00.Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".Z" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00,5Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00,5Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ",5Z" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00.123456789123Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00.123456789123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "789123Z" as "Z07:00"',
    ),
    (
        "é2020",
        'parsing time "\\xc3\\xa92020" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa92020" as "2006"',
        None,
        'parsing time "\\xc3\\xa92020" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "\\xc3\\xa92020" as "2006"',
    ),
    ("2020-01-01T00:00:00.123456Z", None, "2020-01-01T00:00:00.123456Z", None),
    (
        "2020-01-01T00:00:00.123456z",
        'parsing time "2020-01-01T00:00:00.123456z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00.123456z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "z" as "Z07:00"',
    ),
    ("2020-01-01T00:00:00.123456+01:00", None, "2019-12-31T23:00:00.123456Z", None),
    (
        "2020-01-01T00:00:00.12345Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00.12345Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".12345Z" as ".000000"',
    ),
    (
        "2020-01-01T00:00:00.123456",
        'parsing time "2020-01-01T00:00:00.123456" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00.123456" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "" as "Z07:00"',
    ),
    (
        "2020-01-01T00:00:00.123456+0100",
        'parsing time "2020-01-01T00:00:00.123456+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"',
        None,
        'parsing time "2020-01-01T00:00:00.123456+0100" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "+0100" as "Z07:00"',
    ),
    (
        "2020-02-30T00:00:00.000000Z",
        'parsing time "2020-02-30T00:00:00.000000Z": day out of range',
        None,
        'parsing time "2020-02-30T00:00:00.000000Z": day out of range',
    ),
    (
        "2020-01-01T25:00:00.000000Z",
        'parsing time "2020-01-01T25:00:00.000000Z": hour out of range',
        None,
        'parsing time "2020-01-01T25:00:00.000000Z": hour out of range',
    ),
    (
        "2020-01-01T00:00:00.123456Z ",
        'parsing time "2020-01-01T00:00:00.123456Z ": extra text: " "',
        None,
        'parsing time "2020-01-01T00:00:00.123456Z ": extra text: " "',
    ),
    (
        " 2020-01-01T00:00:00Z",
        'parsing time " 2020-01-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 2020-01-01T00:00:00Z" as "2006"',
        None,
        'parsing time " 2020-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse " 2020-01-01T00:00:00Z" as "2006"',
    ),
    (
        "2020-01-01T00:00:00+01:60",
        None,
        None,
        'parsing time "2020-01-01T00:00:00+01:60" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "+01:60" as ".000000"',
    ),
    ("2020-01-01T00:00:00.123456+24:00", None, "2019-12-31T00:00:00.123456Z", None),
    (
        "2020-01-01T00:00:00.1234567890Z",
        None,
        None,
        'parsing time "2020-01-01T00:00:00.1234567890Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7890Z" as "Z07:00"',
    ),
    ("2020-01-01T00:00:00.123456-23:59", None, "2020-01-01T23:59:00.123456Z", None),
]


@pytest.mark.parametrize(("text", "time_error", "micro", "micro_error"), KUBE)
def test_kubes_answers(
    text: str, time_error: str | None, micro: str | None, micro_error: str | None
) -> None:
    for is_micro, error in ((False, time_error), (True, micro_error)):
        if error is None:
            gotime.parse(text, is_micro)
        else:
            with pytest.raises(gotime.TimeParseError) as raised:
                gotime.parse(text, is_micro)
            assert str(raised.value) == error
    if micro is not None:
        assert _canonical_time(text, True) == micro


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"),
        ("2020-01-01T00:00:00,5Z", "2020-01-01T00:00:00Z"),  # a comma fraction, dropped
        ("2020-01-01T00:00:00.123456+24:00", "2019-12-31T00:00:00Z"),
        ("2020-01-01T1:02:03Z", "2020-01-01T01:02:03Z"),  # the hour is not zero-padded
        ("2020-03-01T00:30:00+01:00", "2020-02-29T23:30:00Z"),
    ],
)
def test_times_are_stored_in_utc_to_the_second(text: str, stored: str) -> None:
    assert _canonical_time(text, False) == stored


@pytest.mark.parametrize(
    ("text", "micro", "message"),
    [
        # Go checks an offset's ranges before what failed to read; the minutes win
        ("2020-01-01T00:00:00+25:xx", False, "time zone offset hour out of range"),
        ("2020-01-01T00:00:00+25:61", False, "time zone offset minute out of range"),
        ("2020-01-01T00:00:00.-12345Z", True, "fractional second out of range"),
    ],
)
def test_range_errors_come_first(text: str, micro: bool, message: str) -> None:
    with pytest.raises(gotime.TimeParseError) as raised:
        gotime.parse(text, micro)
    assert str(raised.value) == f'parsing time "{text}": {message}'


def test_a_fraction_is_kept_to_the_microsecond_in_a_micro_time() -> None:
    assert gotime.parse("2020-01-01T00:00:00,123456Z", True) == datetime(
        2020, 1, 1, 0, 0, 0, 123456, tzinfo=UTC
    )
    assert _canonical_time("2020-01-01T00:00:00.+12345Z", True) == "2020-01-01T00:00:00.012345Z"


def test_years_python_cannot_hold_are_refused() -> None:
    """Go takes year 0 (and an offset into year -1); a datetime holds neither, and
    every reader of stored times here uses one, so they are refused."""
    for text in ("0000-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00"):
        with pytest.raises(DecodeError) as raised:
            _canonical_time(text, False)
        assert str(raised.value) == f'parsing time "{text}": year outside of range [1,9999]'
