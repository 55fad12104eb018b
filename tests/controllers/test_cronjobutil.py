"""Schedule evaluation as kube's cronjob controller does it: robfig/cron v3's ``Next``
(expected values produced by robfig/cron v3 itself, on Go's time zone database), and
kube's mostRecentScheduleTime / nextScheduleTimeDuration tables (utils_test.go)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from platform_api.controllers import cronjobutil as cu
from platform_api.registry.cronschedule import (
    STAR,
    ConstantDelaySchedule,
    ScheduleError,
    SpecSchedule,
    load_location,
    parse,
)

Obj = dict[str, Any]


@pytest.fixture(autouse=True)
def utc_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Schedules without a zone run in the process's zone (Go's time.Local): UTC here."""
    monkeypatch.setenv("TZ", "UTC")


def at(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


NEXT = [
    ("*/15 * * * *", "2016-05-19T10:07:00Z", ["10:15", "10:30", "10:45"]),
    # a step over a range; "a/b" runs to the field's end
    ("5-20/5 * * * *", "2016-05-19T10:17:30Z", ["10:20", "11:05", "11:10"]),
    ("0 9 * * MON-FRI", "2016-05-19T10:00:00Z", ["20 09:00", "23 09:00", "24 09:00"]),
    # both days restricted: either one (Mondays, and the 1st and 15th)
    ("0 0 1,15 * MON", "2016-05-19T10:00:00Z", ["23 00:00", "30 00:00", "06-01 00:00"]),
    # "*/10" is no star (a step > 1): the day of the month alone decides
    ("0 0 */10 * *", "2016-05-19T10:00:00Z", ["21 00:00", "31 00:00", "06-01 00:00"]),
    ("0 0 ? * sun", "2016-05-19T10:00:00Z", ["22 00:00", "29 00:00", "06-05 00:00"]),
    ("30 6-16/4 * * 1-5", "2016-05-19T10:00:00Z", ["10:30", "14:30", "20 06:30"]),
    ("0 12 * JAN,jul *", "2016-05-19T10:00:00Z", ["07-01 12:00", "07-02 12:00", "07-03 12:00"]),
    ("@hourly", "2016-05-19T10:00:00Z", ["11:00", "12:00", "13:00"]),
    ("@weekly", "2016-05-19T10:00:00Z", ["22 00:00", "29 00:00", "06-05 00:00"]),
    ("@monthly", "2016-05-19T10:00:00Z", ["06-01 00:00", "07-01 00:00", "08-01 00:00"]),
    ("@every 90m", "2016-05-19T10:00:30Z", ["11:30:30", "13:00:30", "14:30:30"]),
    ("TZ=Asia/Kolkata 0 9 * * *", "2016-05-19T10:00:00Z", ["20 03:30", "21 03:30", "22 03:30"]),
]


def expand(start: str, short: str) -> str:
    """ "10:15" / "20 09:00" / "06-01 00:00" as a full time in the start's month."""
    date, _, clock = short.rpartition(" ")
    day = date if "-" in date else f"{start[5:7]}-{date}" if date else start[5:10]
    clock = clock if clock.count(":") == 2 else f"{clock}:00"
    return f"{start[:4]}-{day}T{clock}Z"


@pytest.mark.parametrize(("spec", "start", "expected"), NEXT)
def test_next_times(spec: str, start: str, expected: list[str]) -> None:
    schedule = parse(spec)
    t: int | None = at(start)
    got = []
    for _ in expected:
        assert t is not None
        t = schedule.next(t)
        got.append(iso(t))
    assert got == [expand(start, e) for e in expected]


# Across DST changes, as robfig walks them: a skipped wall time does not fire that day, a
# repeated one fires at both instants.
DST = [
    (  # 02:30 does not exist in New York on 14 March 2021
        "TZ=America/New_York 30 2 * * *",
        "2021-03-13T12:00:00Z",
        ["2021-03-15T06:30:00Z", "2021-03-16T06:30:00Z"],
    ),
    (  # 01:30 happens twice on 7 November 2021 (EDT, then EST)
        "CRON_TZ=America/New_York 30 1 * * *",
        "2021-11-06T12:00:00Z",
        ["2021-11-07T05:30:00Z", "2021-11-07T06:30:00Z", "2021-11-08T06:30:00Z"],
    ),
    (
        "TZ=America/New_York 0 * * * *",
        "2021-11-07T04:30:00Z",
        ["2021-11-07T05:00:00Z", "2021-11-07T06:00:00Z", "2021-11-07T07:00:00Z"],
    ),
    (  # London skips 01:00-02:00 on 28 March 2021
        "TZ=Europe/London 0 1 * * *",
        "2021-03-27T12:00:00Z",
        ["2021-03-29T00:00:00Z", "2021-03-30T00:00:00Z"],
    ),
    (  # Lord Howe moves by half an hour: 02:00-02:30 skipped on 3 October 2021
        "TZ=Australia/Lord_Howe 0 2 * * *",
        "2021-10-02T00:00:00Z",
        ["2021-10-03T15:00:00Z", "2021-10-04T15:00:00Z"],
    ),
    ("0 0 29 2 *", "2016-05-19T10:00:00Z", ["2020-02-29T00:00:00Z", "2024-02-29T00:00:00Z"]),
    ("59 23 31 2 *", "2016-05-19T10:00:00Z", [None]),  # never: robfig's zero time
]


@pytest.mark.parametrize(("spec", "start", "expected"), DST)
def test_next_times_across_zone_changes(spec: str, start: str, expected: list[str | None]) -> None:
    schedule = parse(spec)
    t: int | None = at(start)
    got = []
    for _ in expected:
        assert t is not None
        t = schedule.next(t)
        got.append(iso(t))
    assert got == expected


def test_a_zone_skipping_a_whole_day_answers_no_time_where_robfig_loops() -> None:
    # Samoa skipped 30 December 2011; robfig's walk never returns from it.
    schedule = parse("TZ=Pacific/Apia 25-30/4 1 27 12/2 *")
    assert iso(schedule.next(at("2011-08-29T18:00:00Z"))) == "2011-12-27T11:25:00Z"
    assert schedule.next(at("2011-12-27T11:29:00Z")) is None


def test_parsed_bits_and_star_flags() -> None:
    schedule = parse("*/1 0 ? 1-2 */2")
    assert isinstance(schedule, SpecSchedule)
    assert schedule.minute == (1 << 60) - 1 | STAR  # a step of 1 keeps the star
    assert schedule.hour == 1 and schedule.dom == (1 << 32) - 2 | STAR
    assert schedule.month == 0b110 and schedule.dow == 0b1010101  # */2: no star
    assert schedule.zone is None  # the process's zone, as Go's time.Local
    assert parse("@every 500ms") == ConstantDelaySchedule(1)  # at least a second
    assert parse("@every 1m30.5s") == ConstantDelaySchedule(90)
    assert parse("CRON_TZ=Europe/Rome @daily").zone == ZoneInfo("Europe/Rome")  # type: ignore[union-attr]
    with pytest.raises(ScheduleError, match="provided bad location Mars/Base: unknown"):
        parse("TZ=Mars/Base * * * * *")
    assert load_location("") is UTC and load_location("UTC") is UTC


def test_without_a_zone_the_process_zone_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    schedule = parse("0 9 * * *")
    monkeypatch.setenv("TZ", "America/New_York")
    assert iso(schedule.next(at("2016-05-19T10:00:00Z"))) == "2016-05-19T13:00:00Z"
    monkeypatch.setenv("TZ", ":Asia/Kolkata")
    assert iso(schedule.next(at("2016-05-19T10:00:00Z"))) == "2016-05-20T03:30:00Z"
    monkeypatch.setenv("TZ", "")  # Go: UTC
    assert iso(schedule.next(at("2016-05-19T10:00:00Z"))) == "2016-05-20T09:00:00Z"


def test_day_matches_uses_either_day_only_when_both_are_restricted() -> None:
    thursday_19th = datetime(2016, 5, 19, tzinfo=UTC)
    both = parse("0 0 1 * thu")
    assert isinstance(both, SpecSchedule) and both.day_matches(thursday_19th)
    star = parse("0 0 1 * *")
    assert isinstance(star, SpecSchedule) and not star.day_matches(thursday_19th)


# -- kube's tables -------------------------------------------------------------------------

TOP = at("2016-05-19T10:00:00Z")  # kube's topOfTheHour
M, H = 60, 3600


def cronjob(schedule: str, created: int, last: int | None = None, **spec: Any) -> Obj:
    status = {"lastScheduleTime": iso(last)} if last is not None else {}
    return {
        "metadata": {"name": "mycronjob", "creationTimestamp": iso(created)},
        "spec": {"schedule": schedule, **spec},
        "status": status,
    }


MOST_RECENT = [  # (schedule, created, last, spec, with deadline, now, earliest, recent, missed)
    ("0 * * * *", TOP, None, {}, False, TOP + 30, TOP, None, "none"),
    ("0 * * * *", TOP, None, {}, False, TOP + 61 * M, TOP, TOP + H, "none"),
    ("0 * * * *", TOP + 10, None, {}, False, TOP + 301 * M, TOP + 10, TOP + 300 * M, "few"),
    (
        "30 6-16/4 * * 1-5",
        TOP,
        TOP + 30 * M,
        {},
        False,
        TOP + 24 * H + 31 * M,
        TOP + 30 * M,
        TOP + 24 * H + 30 * M,
        "few",
    ),
    (
        "30 10,11,12 * * 1-5",
        TOP,
        TOP + 30 * M,
        {},
        False,
        TOP + 30 * H + 30 * M,
        TOP + 30 * M,
        None,
        "few",
    ),
    (
        "30 6-16/4 * * 1-5",
        TOP,
        TOP + 30 * M,
        {},
        False,
        TOP + 96 * H + 31 * M,
        TOP + 30 * M,
        TOP + 96 * H + 30 * M,
        "few",
    ),
    (
        "@every 1h",
        TOP - 59 * M,
        TOP + M,
        {"startingDeadlineSeconds": 10},
        False,
        TOP + 7 * 24 * H,
        TOP + M,
        TOP + 6 * 24 * H + 23 * H + M,
        "many",
    ),
    ("0 * * * *", TOP, TOP, {}, False, TOP + 30, TOP, None, "none"),
    ("*/5 * * * *", TOP, TOP + 30 * M, {}, False, TOP + 31 * M, TOP + 30 * M, None, "none"),
    (
        "*/5 * * * *",
        TOP,
        TOP + 30 * M,
        {"startingDeadlineSeconds": 60},
        False,
        TOP + 31 * M,
        TOP + 30 * M,
        None,
        "none",
    ),
    (
        "*/5 * * * *",
        TOP,
        TOP + 30 * M,
        {"startingDeadlineSeconds": 60},
        True,
        TOP + 32 * M,
        TOP + 31 * M,
        None,
        "none",
    ),
]


@pytest.mark.parametrize(
    ("schedule", "created", "last", "spec", "deadline", "now", "earliest", "recent", "missed"),
    MOST_RECENT,
)
def test_most_recent_schedule_time(
    schedule: str,
    created: int,
    last: int | None,
    spec: Obj,
    deadline: bool,
    now: int,
    earliest: int,
    recent: int | None,
    missed: str,
) -> None:
    cj = cronjob(schedule, created, last, **spec)
    got = cu.most_recent_schedule_time(cj, now, parse(schedule), deadline)
    assert got == (earliest, recent, cu.Missed(missed))


def test_a_schedule_that_never_fires_is_an_error() -> None:
    cj = cronjob("59 23 31 2 *", TOP + 10)
    with pytest.raises(ScheduleError, match="less than 1 second"):
        cu.most_recent_schedule_time(cj, TOP + H, parse("59 23 31 2 *"), False)


NEXT_DELAY = [  # (schedule, created, last, now, delay)
    ("30 6-16/4 * * 1-5", TOP, TOP + 30 * M, TOP + 24 * H + 31 * M, 3 * H + 59 * M),
    ("30 10,11,12 * * 1-5", TOP, TOP + 30 * M, TOP + 30 * H + 30 * M, 66 * H),
    ("0 12 * * 4", TOP, TOP + 2 * H, TOP + 19 * 24 * H + H + 30 * M, 48 * H + 30 * M),
    ("0 12 * * 5", TOP, None, TOP + 6 * H, 20 * H),
]


@pytest.mark.parametrize(("schedule", "created", "last", "now", "delay"), NEXT_DELAY)
def test_next_schedule_delay(
    schedule: str, created: int, last: int | None, now: int, delay: int
) -> None:
    cj = cronjob(schedule, created, last)
    assert cu.next_schedule_delay(cj, now, parse(schedule)) == pytest.approx(delay + 0.1)


def test_the_job_of_a_scheduled_time() -> None:
    cj = cronjob("* * * * ?", TOP)
    cj["metadata"].update(namespace="snazzycats", uid="1a2b3c")
    template = {"metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}}, "spec": {"x": 1}}
    cj["spec"]["jobTemplate"] = template
    job = cu.job_from_template(cj, TOP)
    assert job == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "mycronjob-24394200",
            "labels": {"a": "b"},
            "annotations": {"x": "y", cu.SCHEDULED_AT: "2016-05-19T10:00:00Z"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "name": "mycronjob",
                    "uid": "1a2b3c",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"x": 1},
    }
    cj["spec"]["timeZone"] = "Europe/Rome"
    assert job["spec"] is not template["spec"]
    stamped = cu.job_from_template(cj, TOP)["metadata"]["annotations"][cu.SCHEDULED_AT]
    assert stamped == "2016-05-19T12:00:00+02:00"
    cj["spec"]["timeZone"] = "America/St_Johns"
    stamped = cu.job_from_template(cj, TOP)["metadata"]["annotations"][cu.SCHEDULED_AT]
    assert stamped == "2016-05-19T07:30:00-02:30"


def test_schedule_formatting_and_time_texts() -> None:
    cj = cronjob("0 * * * *", TOP, timeZone="Europe/Rome")
    assert cu.format_schedule(cj) == "TZ=Europe/Rome 0 * * * *"
    cj["spec"]["schedule"] = "CRON_TZ=UTC 0 * * * *"  # its own zone wins, as in kube
    assert cu.format_schedule(cj) == "CRON_TZ=UTC 0 * * * *"
    cj["spec"].update(schedule="0 * * * *", timeZone="Mars/Base")
    assert cu.format_schedule(cj) == "0 * * * *"
    assert cu.rfc1123z(TOP + 0.5) == "Thu, 19 May 2016 10:00:00 +0000"
    assert cu.rfc3339(TOP, ZoneInfo("Europe/London")) == "2016-05-19T11:00:00+01:00"
    assert cu.rfc3339(TOP - 130 * 24 * H, ZoneInfo("Europe/London")) == "2016-01-10T10:00:00Z"


def test_jobs_sort_by_start_time_unstarted_last_then_by_name() -> None:
    def job(name: str, start: str | None) -> Obj:
        return {"metadata": {"name": name}, "status": {"startTime": start} if start else {}}

    jobs = [job("b", None), job("a", None), job("c", "2019-01-01T02:03:04Z")]
    jobs += [job("b2", "2018-01-01T02:03:04Z"), job("a2", "2018-01-01T02:03:04Z")]
    ordered = [j["metadata"]["name"] for j in sorted(jobs, key=cu.by_start_time)]
    assert ordered == ["a2", "b2", "c", "a", "b"]
