"""CronJob schedules and time zones, each refused as kube-apiserver v1.36 refused it
(reference: dry-run creates); "" where kube accepted."""

from __future__ import annotations

import pytest

from platform_api.registry.cronschedule import schedule_errors, time_zone_errors

SCHEDULES = [
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * 32 * *", "end of range (32) above maximum (31): 32"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("* * * * 8", "end of range (8) above maximum (6): 8"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/5/2 * * * *", "too many slashes: */5/2"),
    ("* * * JAN-MAR MON", ""),
    ("* * * FOO *", 'failed to parse int from FOO: strconv.Atoi: parsing "FOO": invalid syntax'),
    ("@every 5m", ""),
    ("@foo", "unrecognized descriptor: @foo"),
    ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
    ("*", "expected exactly 5 fields, found 1: [*]"),
    ("0 0 ? * *", ""),
    ("1,2,99 * * * *", "end of range (99) above maximum (59): 99"),
    ("TZ=UTC * * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
    (
        "CRON_TZ=Europe/Paris 0 * * * *",
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
    ),
    ("* * * * SUN-SAT", ""),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("1- * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    (" * * * * *", ""),
    ("0/15 * * * *", ""),
    ("3/15 * * * *", ""),
]
ZONES = [
    ("Mars/Base", "unknown time zone Mars/Base"),
    ("Etc/UTC", ""),
    (
        "Local",
        "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
    ),
    ("", "timeZone must be nil or non-empty string"),
    (" Europe/Paris", "unknown time zone  Europe/Paris"),
    # names zoneinfo finds no file for in other ways (a directory, too long for a path)
    ("Europe", "is a directory"),
    ("x" * 300, "unknown time zone " + "x" * 300),
]


@pytest.mark.parametrize(("schedule", "message"), SCHEDULES)
def test_schedules(schedule: str, message: str) -> None:
    assert schedule_errors(schedule) == ([message] if message else [])


@pytest.mark.parametrize(("zone", "message"), ZONES)
def test_time_zones(zone: str, message: str) -> None:
    assert time_zone_errors(zone) == ([message] if message else [])
