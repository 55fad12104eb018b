"""Go's ``time.Parse`` for the two layouts kube decodes times with.

A ``metav1.Time`` is read with ``time.RFC3339`` and a ``metav1.MicroTime`` with
``2006-01-02T15:04:05.000000Z07:00``.  Go's parser walks the layout element by element,
so what it accepts (a one-digit hour, a comma before a fraction, a ``+24:00`` offset;
never a lower-case ``t`` or ``z``, and a MicroTime only with exactly six fraction
digits) and the error it gives (``cannot parse "1-01T..." as "01"``, ``month out of
range``, ``extra text``) follow from the element where it stopped.  This module walks
the same elements on the same bytes, so both come out as kube's.

(Go tries a faster RFC 3339 reader first; whatever that one accepts, this walk accepts
with the same result, and its errors are always this walk's.)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from platform_api.goduration import quote

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# Each layout as Go's nextStdChunk splits it: (literal prefix, element).
_ELEMENTS = [("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05")]
_CHUNKS = {
    False: [*_ELEMENTS, ("", "Z07:00")],
    True: [*_ELEMENTS, ("", ".000000"), ("", "Z07:00")],
}
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class TimeParseError(ValueError):
    """Go's ``*time.ParseError``, worded as its ``Error()``."""


class _Bad(Exception):
    """Go's ``errBad``: the element did not read."""


def parse(text: str, micro: bool = False) -> datetime:
    """``text`` as Go reads it with RFC 3339 (``micro``: kube's RFC3339Micro), in UTC.

    Years outside 1-9999 are refused: Python's datetime holds no others (Go takes 0)."""
    layout = RFC3339_MICRO if micro else RFC3339
    fields = _Fields(text.encode("utf-8", "surrogateescape"), layout, text)
    for prefix, element in _CHUNKS[micro]:
        fields.skip(prefix)
        fields.read(element, micro)
    if fields.rest:
        raise fields.error(": extra text: " + _text(fields.rest))
    if not 1 <= fields.day <= _days_in(fields.month, fields.year):
        raise fields.error(": day out of range")
    try:
        moment = datetime(
            fields.year,
            fields.month,
            fields.day,
            fields.hour,
            fields.minute,
            fields.second,
            fields.nanos // 1000,
            tzinfo=UTC,
        )
        return moment - timedelta(seconds=fields.offset)
    except (ValueError, OverflowError):
        raise fields.error(": year outside of range [1,9999]") from None


class _Fields:
    """The walk's state: what is left of the value, and the fields read so far."""

    def __init__(self, value: bytes, layout: str, text: str) -> None:
        self.rest = value
        self.layout = layout
        self.text = text
        self.year = self.month = self.day = 0
        self.hour = self.minute = self.second = self.nanos = self.offset = 0

    def error(self, message: str, element: str = "", at: bytes = b"") -> TimeParseError:
        if message:
            return TimeParseError(f"parsing time {quote(self.text)}{message}")
        return TimeParseError(
            f"parsing time {quote(self.text)} as {quote(self.layout)}: "
            f"cannot parse {_text(at)} as {quote(element)}"
        )

    def skip(self, prefix: str) -> None:
        """A literal of the layout (``-``, ``T``, ``:``): matched byte for byte."""
        if prefix and not self.rest.startswith(prefix.encode()):
            raise self.error("", prefix, self.rest)
        self.rest = self.rest[len(prefix) :]

    def read(self, element: str, micro: bool) -> None:
        hold = self.rest
        try:
            out_of_range = self._read(element, micro)
        except _Bad:
            raise self.error("", element, hold) from None
        if out_of_range:
            raise self.error(f": {out_of_range} out of range")

    def _read(self, element: str, micro: bool) -> str:
        """Read one element; the name of a field out of its range, else ``""``."""
        if element == "2006":
            if len(self.rest) < 4 or not _digit(self.rest, 0):
                raise _Bad
            self.year, self.rest = _atoi(self.rest[:4]), self.rest[4:]
            return ""
        if element == "01":
            self.month = self._number(fixed=True)
            return "month" if not 1 <= self.month <= 12 else ""
        if element == "02":
            self.day = self._number(fixed=True)  # checked against the month at the end
            return ""
        if element == "15":
            self.hour = self._number(fixed=False)
            return "hour" if self.hour >= 24 else ""
        if element == "04":
            self.minute = self._number(fixed=True)
            return "minute" if self.minute >= 60 else ""
        if element == "05":
            return self._seconds(micro)
        if element == ".000000":
            if len(self.rest) < 7:
                raise _Bad
            self.nanos, problem = _nanoseconds(self.rest, 7)
            self.rest = self.rest[7:]
            return problem
        return self._zone()

    def _number(self, fixed: bool) -> int:
        """Go's getnum: two digits, or one where the element is not zero-padded."""
        if not _digit(self.rest, 0):
            raise _Bad
        if not _digit(self.rest, 1):
            if fixed:
                raise _Bad
            value, self.rest = self.rest[0] - 48, self.rest[1:]
            return value
        value, self.rest = (self.rest[0] - 48) * 10 + self.rest[1] - 48, self.rest[2:]
        return value

    def _seconds(self, micro: bool) -> str:
        self.second = self._number(fixed=True)
        if self.second >= 60:
            return "second"
        rest = self.rest
        if micro or len(rest) < 2 or rest[0] not in b".," or not _digit(rest, 1):
            return ""  # a fraction in the layout reads it next
        # RFC 3339's layout has none, and Go takes one anyway, of any length
        n = 2
        while n < len(rest) and _digit(rest, n):
            n += 1
        self.nanos, problem = _nanoseconds(rest, n)
        self.rest = rest[n:]
        return problem

    def _zone(self) -> str:
        rest = self.rest
        if rest[:1] == b"Z":
            self.rest = rest[1:]
            return ""
        if len(rest) < 6 or rest[3:4] != b":":
            raise _Bad
        sign, self.rest = rest[:1], rest[6:]
        hours = _two_digits(rest[1:3])
        minutes = _two_digits(rest[4:6]) if hours is not None else None
        # Go checks the ranges before it looks at what failed to read, and its test
        # is > rather than >=: some write offsets of 24 hours or 60 minutes
        if (minutes or 0) > 60:
            return "time zone offset minute"
        if (hours or 0) > 24:
            return "time zone offset hour"
        if hours is None or minutes is None or sign not in (b"+", b"-"):
            raise _Bad
        self.offset = (hours * 60 + minutes) * 60 * (1 if sign == b"+" else -1)
        return ""


def _digit(value: bytes, i: int) -> bool:
    return i < len(value) and 48 <= value[i] <= 57


def _two_digits(value: bytes) -> int | None:
    if not (_digit(value, 0) and _digit(value, 1)):
        return None
    return (value[0] - 48) * 10 + value[1] - 48


def _atoi(value: bytes) -> int:
    """Go's time.atoi: an optional sign, then digits and nothing else."""
    sign = -1 if value[:1] == b"-" else 1
    digits = value[1:] if value[:1] in (b"-", b"+") else value
    if not digits or not digits.isdigit():
        raise _Bad
    return sign * int(digits)


def _nanoseconds(value: bytes, n: int) -> tuple[int, str]:
    """Go's parseNanoseconds of ``value[:n]``: a period or comma, then digits, of which
    nine count."""
    if value[:1] not in (b".", b","):
        raise _Bad
    n = min(n, 10)
    nanos = _atoi(value[1:n])
    if nanos < 0:
        return 0, "fractional second"
    return nanos * 10 ** (10 - n), ""


def _days_in(month: int, year: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _DAYS[month - 1]


def _text(value: bytes) -> str:
    return quote(value.decode("utf-8", "surrogateescape"))
