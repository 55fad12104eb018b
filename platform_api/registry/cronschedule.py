"""CronJob schedules and time zones, as kube reads them (robfig/cron v3's ParseStandard:
five fields or a descriptor, an optional ``TZ=``/``CRON_TZ=`` prefix; Go's LoadLocation).

Validation refuses with kube's texts (``schedule_errors``, ``time_zone_errors``); the
cronjob controller evaluates with ``parse``: a schedule's ``next(after)`` is robfig's
``Next``, walked with Go's calendar arithmetic in the schedule's zone, so that a wall
time a DST change skips is skipped and one it repeats fires twice, as in kube.
"""

from __future__ import annotations

import functools
import math
import os
import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo

from platform_api.goduration import parse_duration
from platform_api.validation.field import go_quote

# Each field's bounds and names (robfig/cron's minutes, hours, dom, months, dow).
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_ATOI = re.compile(r"[+-]?[0-9]+")
STAR = 1 << 63  # robfig's starBit: the field was "*" or "?" (the day-of-month/week rule)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_SECOND = 1_000_000_000  # nanoseconds


class ScheduleError(ValueError):
    pass


class _Stuck(Exception):
    """A step that did not move forward: a whole day a zone skipped (Samoa's 30 December
    2011), where robfig's walk loops forever; this walk answers "no time" instead."""


def schedule_errors(schedule: str) -> list[str]:
    """What kube's validateScheduleFormat says of ``schedule`` (a new CronJob's)."""
    errs = []
    try:
        parse(schedule)
    except ScheduleError as e:
        errs.append(str(e))
    if "TZ" in schedule:
        errs.append("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    return errs


def time_zone_errors(zone: str) -> list[str]:
    """kube's validateTimeZone: an explicit IANA zone Go's LoadLocation knows."""
    if not zone:
        return ["timeZone must be nil or non-empty string"]
    if zone.lower() == "local":
        return [
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        ]
    problem = _zone_problem(zone)
    return [problem] if problem else []


def _zone_problem(zone: str) -> str:
    """What Go's LoadLocation says of ``zone``, or "" when it loads."""
    if zone == "UTC":
        return ""
    try:
        zoneinfo.ZoneInfo(zone)
    except IsADirectoryError:  # "America": Go reads the directory and says so
        return "is a directory"
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # missing, "..", too long
        return f"unknown time zone {zone}"
    return ""


def load_location(zone: str) -> tzinfo:
    """Go's LoadLocation: "" and "UTC" are UTC, "Local" the process's zone, else IANA;
    ScheduleError with Go's message for a zone it does not know."""
    if zone in ("", "UTC"):
        return UTC
    if zone == "Local":
        return local_zone()
    problem = _zone_problem(zone)
    if problem:
        raise ScheduleError(problem)
    return zoneinfo.ZoneInfo(zone)


def local_zone() -> tzinfo:
    """Go's time.Local: the zone named by $TZ ("" is UTC), else /etc/localtime, else UTC."""
    return _local_zone(os.environ.get("TZ"))


@functools.lru_cache(maxsize=4)
def _local_zone(tz: str | None) -> tzinfo:
    try:
        if tz is None:
            with open("/etc/localtime", "rb") as f:
                return zoneinfo.ZoneInfo.from_file(f, key="Local")
        tz = tz.removeprefix(":")
        if tz.startswith("/"):
            with open(tz, "rb") as f:
                return zoneinfo.ZoneInfo.from_file(f, key="Local")
        if tz and tz != "UTC":
            return zoneinfo.ZoneInfo(tz)
    except (OSError, ValueError, zoneinfo.ZoneInfoNotFoundError):
        pass
    return UTC


# -- parsing ----------------------------------------------------------------------------


def parse(spec: str) -> SpecSchedule | ConstantDelaySchedule:
    """robfig/cron's ParseStandard; ScheduleError with its message when it refuses."""
    if not spec:
        raise ScheduleError("empty spec string")
    zone: tzinfo | None = None  # Go's time.Local: the zone of the times it is given
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, rest = spec.partition(" ")
        name = head.partition("=")[2]
        try:
            zone = load_location(name)
        except ScheduleError as e:
            raise ScheduleError(f"provided bad location {name}: {e}") from None
        spec = rest.strip()
    if spec.startswith("@"):
        return _descriptor(spec, zone)
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    bits = []
    for text, (low, high, names) in zip(fields, _FIELDS, strict=True):
        ranges = (_range(expr, low, high, names) for expr in text.split(",") if expr)
        bits.append(functools.reduce(int.__or__, ranges, 0))
    minute, hour, dom, month, dow = bits
    return SpecSchedule(minute, hour, dom, month, dow, zone)


def _descriptor(spec: str, zone: tzinfo | None) -> SpecSchedule | ConstantDelaySchedule:
    midnight, day_one = 1 << 0, 1 << 1  # the first minute and hour; the first day, month
    days, months, weekdays = _all(1, 31), _all(1, 12), _all(0, 6)
    shapes = {  # hours, days of the month, months, days of the week
        "@yearly": (midnight, day_one, day_one, weekdays),
        "@annually": (midnight, day_one, day_one, weekdays),
        "@monthly": (midnight, day_one, months, weekdays),
        "@weekly": (midnight, days, months, 1 << 0),
        "@daily": (midnight, days, months, weekdays),
        "@midnight": (midnight, days, months, weekdays),
        "@hourly": (_all(0, 23), days, months, weekdays),
    }
    if spec in shapes:
        return SpecSchedule(midnight, *shapes[spec], zone)
    if spec.startswith("@every "):
        every = spec[len("@every ") :]
        try:
            nanos = parse_duration(every)
        except ValueError as e:
            raise ScheduleError(f"failed to parse duration {spec}: {e}") from None
        return ConstantDelaySchedule(max(nanos, _SECOND) // _SECOND)
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> int:
    """robfig/cron's getRange: ``*``, ``?``, ``a``, ``a-b``, each with an optional ``/step``;
    the bits of the values it takes (and STAR for a ``*`` or ``?`` without a step > 1)."""
    range_and_step = expr.split("/")
    bounds = range_and_step[0].split("-")
    extra = 0
    if bounds[0] in ("*", "?"):
        start, end, extra = low, high, STAR
    else:
        start = _int_or_name(bounds[0], names)
        if len(bounds) > 2:
            raise ScheduleError(f"too many hyphens: {expr}")
        end = _int_or_name(bounds[1], names) if len(bounds) == 2 else start
    step = 1
    if len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(bounds) == 1:  # "N/step" is "N-max/step"
            end = high
        if step > 1:
            extra = 0
    elif len(range_and_step) > 2:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return sum(1 << v for v in range(start, end + 1, step)) | extra


def _all(low: int, high: int) -> int:
    return _range("*", low, high, {})


def _int_or_name(text: str, names: dict[str, int]) -> int:
    named = names.get(text.lower())
    return named if named is not None else _atoi(text)


def _atoi(text: str) -> int:
    """robfig/cron's mustParseInt over Go's strconv.Atoi."""
    if not _ATOI.fullmatch(text):
        raise ScheduleError(
            f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: invalid syntax"
        )
    number = int(text)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {text}")
    return number


# -- evaluation -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConstantDelaySchedule:
    """``@every <duration>``: the duration in whole seconds (at least one) after a time."""

    delay: int

    def next(self, after: float) -> int | None:
        return math.floor(after) + self.delay


@dataclass(frozen=True)
class SpecSchedule:
    """The bits of the minutes, hours, days of the month, months and days of the week a
    schedule fires at (robfig's SpecSchedule; seconds are always 0)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    zone: tzinfo | None = None  # None: Go's time.Local, the process's zone

    def next(self, after: float) -> int | None:
        """The first time (unix seconds) after ``after`` the schedule fires; None when
        there is none within five years (robfig's zero time)."""
        cal = _Calendar(self.zone or local_zone())
        t = math.floor(after) + 1
        limit = cal.at(t).year + 5
        added = False  # a field moved: the ones below start from their lowest value
        try:
            return self._walk(cal, t, limit, added)
        except _Stuck:
            return None

    def _walk(self, cal: _Calendar, t: int, limit: int, added: bool) -> int | None:
        while cal.at(t).year <= limit:
            t, added, wrapped = self._month(cal, t, added)
            if wrapped:
                continue
            t, added, wrapped = self._day(cal, t, added)
            if wrapped:
                continue
            t, added, wrapped = self._hour(cal, t, added)
            if wrapped:
                continue
            t, added, wrapped = self._minute(cal, t, added)
            if wrapped:
                continue
            t, added, wrapped = _second(cal, t, added)
            if not wrapped:
                return t
        return None

    def _month(self, cal: _Calendar, t: int, added: bool) -> tuple[int, bool, bool]:
        while not (1 << cal.at(t).month) & self.month:
            if not added:
                added = True
                now = cal.at(t)
                t = cal.date(now.year, now.month, 1)
            t = _forward(t, cal.add_date(t, months=1))
            if cal.at(t).month == 1:
                return t, added, True
        return t, added, False

    def _day(self, cal: _Calendar, t: int, added: bool) -> tuple[int, bool, bool]:
        while not self.day_matches(cal.at(t)):
            if not added:
                added = True
                now = cal.at(t)
                t = cal.date(now.year, now.month, now.day)
            before, t = t, cal.add_date(t, days=1)
            hour = cal.at(t).hour
            if hour:  # a DST change moved midnight: back to it (or on to the next day)
                t += (24 - hour) * 3600 if hour > 12 else -hour * 3600
            _forward(before, t)
            if cal.at(t).day == 1:
                return t, added, True
        return t, added, False

    def day_matches(self, when: datetime) -> bool:
        """Both days must match when either field was "*" or "?", else either one."""
        dom = bool((1 << when.day) & self.dom)
        dow = bool((1 << ((when.weekday() + 1) % 7)) & self.dow)  # Go: Sunday is 0
        if (self.dom | self.dow) & STAR:
            return dom and dow
        return dom or dow

    def _hour(self, cal: _Calendar, t: int, added: bool) -> tuple[int, bool, bool]:
        while not (1 << cal.at(t).hour) & self.hour:
            if not added:
                added = True
                now = cal.at(t)
                t = cal.date(now.year, now.month, now.day, now.hour)
            t += 3600
            if cal.at(t).hour == 0:
                return t, added, True
        return t, added, False

    def _minute(self, cal: _Calendar, t: int, added: bool) -> tuple[int, bool, bool]:
        while not (1 << cal.at(t).minute) & self.minute:
            if not added:
                added = True
                t -= t % 60
            t += 60
            if cal.at(t).minute == 0:
                return t, added, True
        return t, added, False


def _forward(before: int, after: int) -> int:
    if after <= before:
        raise _Stuck
    return after


def _second(cal: _Calendar, t: int, added: bool) -> tuple[int, bool, bool]:
    """Seconds are always 0 in a standard schedule."""
    while cal.at(t).second != 0:
        added = True
        t += 1
        if cal.at(t).second == 0:
            return t, added, True
    return t, added, False


class _Calendar:
    """Go's time arithmetic in one zone over unix seconds: ``date`` is time.Date (a wall
    time a DST change skips or repeats resolved as Go resolves it), ``add_date`` AddDate."""

    def __init__(self, zone: tzinfo) -> None:
        self.zone = zone

    def at(self, t: int) -> datetime:
        return datetime.fromtimestamp(t, self.zone)

    def _offset(self, t: int) -> int:
        offset = self.at(t).utcoffset()
        return int(offset.total_seconds()) if offset is not None else 0

    def date(self, year: int, month: int, day: int, hour: int = 0, *clock: int) -> int:
        """time.Date: the instant of a wall time (minutes, seconds in ``clock``)."""
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
        days = date(year, month, 1).toordinal() - _EPOCH_DAY + day - 1
        minute, second = (*clock, 0, 0)[:2]
        wall = days * 86400 + hour * 3600 + minute * 60 + second
        # the offset in force at the wall time read as UTC, then at the instant it gives
        return wall - self._offset(wall - self._offset(wall))

    def add_date(self, t: int, months: int = 0, days: int = 0) -> int:
        now = self.at(t)
        return self.date(
            now.year, now.month + months, now.day + days, now.hour, now.minute, now.second
        )
