"""CronJob schedules and time zones, refused with the texts kube's validation gives:
robfig/cron v3's ParseStandard (five fields, or a descriptor) and Go's LoadLocation."""

from __future__ import annotations

import re
import zoneinfo

from platform_api.codec.protobuf_values import parse_duration
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
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_ATOI = re.compile(r"[+-]?[0-9]+")


class ScheduleError(ValueError):
    pass


def schedule_errors(schedule: str) -> list[str]:
    """What kube's validateScheduleFormat says of ``schedule`` (a new CronJob's)."""
    errs = []
    try:
        _parse_standard(schedule)
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


def _parse_standard(spec: str) -> None:
    if not spec:
        raise ScheduleError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, rest = spec.partition(" ")
        zone = head.partition("=")[2]
        problem = _zone_problem(zone)
        if problem:
            raise ScheduleError(f"provided bad location {zone}: {problem}")
        spec = rest.strip()
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, (low, high, names) in zip(fields, _FIELDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _range(expr, low, high, names)


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        every = spec[len("@every ") :]
        try:
            parse_duration(every)
        except ValueError as e:
            raise ScheduleError(f"failed to parse duration {spec}: {e}") from None
        return
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    """robfig/cron's getRange: ``*``, ``?``, ``a``, ``a-b``, each with an optional ``/step``."""
    range_and_step = expr.split("/")
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end = low, high
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
