"""Go's ``time.Duration`` as text: ``time.ParseDuration``, ``Duration.String``, and
kube-openapi's ``strfmt.ParseDuration`` (the ``duration`` format of schemas and CEL).

kube reads durations from flags, config files, ``?timeout=``, CronJob ``@every`` and
``metav1.Duration`` fields with Go's parser, and its errors reach users word for word
(``time: unknown unit "e" in duration "1e3s"``); a value past int64 nanoseconds
(2562047h47m16.854775807s) is refused.  Both directions live here, once.
"""

from __future__ import annotations

import re

_UNITS = {
    b"ns": 1,
    b"us": 1_000,
    "\u00b5s".encode(): 1_000,  # micro sign
    "\u03bcs".encode(): 1_000,  # Greek small mu
    b"ms": 1_000_000,
    b"s": 1_000_000_000,
    b"m": 60_000_000_000,
    b"h": 3_600_000_000_000,
}
_LIMIT = 1 << 63  # Go accumulates in a uint64 and checks against this
_DIGITS = frozenset(b"0123456789")


def seconds_duration(seconds: int) -> int:
    """Go's ``time.Duration(seconds) * time.Second`` in nanoseconds: the product wraps at
    64 bits, as Go's integer multiplication does (a watch's ``timeoutSeconds`` past
    9223372036 is a negative timer in kube, 1<<63 seconds a zero one)."""
    return (seconds * 1_000_000_000 + _LIMIT) % (2 * _LIMIT) - _LIMIT


def parse_duration(text: str) -> int:
    """Go's ``time.ParseDuration`` in nanoseconds; ValueError with Go's message."""
    orig = text.encode("utf-8", "surrogateescape")
    s, negative, total = orig, False, 0
    if s[:1] in (b"-", b"+"):
        negative, s = s[:1] == b"-", s[1:]
    if s == b"0":
        return 0
    if not s:
        raise _invalid(orig)
    while s:
        if s[0] != 0x2E and s[0] not in _DIGITS:  # the next byte must be [0-9.]
            raise _invalid(orig)
        whole, s, pre = _leading_int(s, orig)
        fraction, scale, post = 0, 1.0, False
        if s[:1] == b".":
            fraction, scale, s, post = _leading_fraction(s[1:])
        if not pre and not post:  # no digits: ".s"
            raise _invalid(orig)
        end = 0
        while end < len(s) and s[end] != 0x2E and s[end] not in _DIGITS:
            end += 1
        if end == 0:
            raise ValueError(f"time: missing unit in duration {_quote(orig)}")
        unit = _UNITS.get(s[:end])
        if unit is None:
            raise ValueError(f"time: unknown unit {_quote(s[:end])} in duration {_quote(orig)}")
        s = s[end:]
        if whole > _LIMIT // unit:
            raise _invalid(orig)
        value = whole * unit
        if fraction:  # float64, as Go (nanosecond-accurate for fractions of hours)
            value += int(float(fraction) * (float(unit) / scale))
            if value > _LIMIT:
                raise _invalid(orig)
        total = (total + value) % (1 << 64)  # a uint64 in Go, wrapping as it does
        if total > _LIMIT:
            raise _invalid(orig)
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise _invalid(orig)
    return total


def _leading_int(s: bytes, orig: bytes) -> tuple[int, bytes, bool]:
    value, i = 0, 0
    while i < len(s) and s[i] in _DIGITS:
        if value > _LIMIT // 10:
            raise _invalid(orig)
        value = value * 10 + s[i] - 0x30
        if value > _LIMIT:
            raise _invalid(orig)
        i += 1
    return value, s[i:], i > 0


def _leading_fraction(s: bytes) -> tuple[int, float, bytes, bool]:
    """Digits after the point; past int64 they stop adding precision (no error)."""
    value, scale, i, overflow = 0, 1.0, 0, False
    while i < len(s) and s[i] in _DIGITS:
        if not overflow:
            longer = value * 10 + s[i] - 0x30
            if value > (_LIMIT - 1) // 10 or longer > _LIMIT:
                overflow = True
            else:
                value, scale = longer, scale * 10
        i += 1
    return value, scale, s[i:], i > 0


def _invalid(orig: bytes) -> ValueError:
    return ValueError(f"time: invalid duration {_quote(orig)}")


def quote(text: str) -> str:
    """How Go's time package quotes a value in its errors (``parsing time "..."``)."""
    return _quote(text.encode("utf-8", "surrogateescape"))


def _quote(s: bytes) -> str:
    """The time package's quote: control and non-ASCII bytes as ``\\xNN``."""
    out, i = ['"'], 0
    while i < len(s):
        rune, width = _rune(s, i)
        if rune >= 0x80 or rune < 0x20:
            out.extend(f"\\x{b:02x}" for b in s[i : i + width])
        else:
            out.append("\\" + chr(rune) if rune in (0x22, 0x5C) else chr(rune))
        i += width
    out.append('"')
    return "".join(out)


def _rune(s: bytes, i: int) -> tuple[int, int]:
    """The rune at ``s[i]`` and its width, as Go's range over a string (a bad byte: 1)."""
    if s[i] < 0x80:
        return s[i], 1
    for width in (2, 3, 4):
        try:
            char = s[i : i + width].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return ord(char), width
    return 0xFFFD, 1


# strfmt's second chance, after Go's syntax: "3 days", "1 hour 20 min" (Go's \s).
_LOOSE = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-z\u00b5]+)")
_LOOSE_UNITS = (  # each unit's spellings; the last one also as a prefix ("hours")
    (("ns", "nano"), 1),
    (("us", "\u00b5s", "micro"), 1_000),
    (("ms", "milli"), 1_000_000),
    (("s", "sec"), 1_000_000_000),
    (("m", "min"), 60_000_000_000),
    (("h", "hr", "hour"), 3_600_000_000_000),
    (("d", "day"), 86_400_000_000_000),
    (("w", "wk", "week"), 604_800_000_000_000),
)


def parse_openapi_duration(text: str) -> int | None:
    """kube-openapi's ``strfmt.ParseDuration`` in nanoseconds, None where it errs: Go's
    syntax, else every ``<count> <unit>`` it finds (a count past int64 is an error)."""
    try:
        return parse_duration(text)
    except ValueError:
        pass
    total, found = 0, False
    for count, word in _LOOSE.findall(text):
        if int(count) > _LIMIT - 1:
            return None
        unit = word.lower()
        for spellings, scale in _LOOSE_UNITS:
            if unit in spellings or unit.startswith(spellings[-1]):
                total, found = total + int(count) * scale, True
    return total if found else None


def format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String``: ``0s``, ``1.5s``, ``1m30s``, ``1h0m0s``, ``500ms``."""
    if nanos == 0:
        return "0s"
    u = abs(nanos)
    if u < 1_000_000_000:
        unit, digits = ("ns", 0) if u < 1_000 else ("\u00b5s", 3) if u < 1_000_000 else ("ms", 6)
        whole, frac = divmod(u, 10**digits)
        text = f"{whole}{_fraction(frac, digits)}{unit}"
    else:
        seconds, frac = divmod(u, 1_000_000_000)
        text = f"{seconds % 60}{_fraction(frac, 9)}s"
        minutes = seconds // 60
        if minutes:
            text = f"{minutes % 60}m{text}"
            if minutes // 60:
                text = f"{minutes // 60}h{text}"
    return "-" + text if nanos < 0 else text


def _fraction(value: int, digits: int) -> str:
    if not value:
        return ""
    return "." + str(value).rjust(digits, "0").rstrip("0")
