"""The string formats kube checks in custom resources (kube-openapi's ``strfmt`` registry).

Each checker mirrors the Go function kube registers for the format (``net.ParseIP`` for
``ipv6``, ``url.ParseRequestURI`` for ``uri``, ``time.Parse`` for ``date`` ...), so that a
value kube accepts is accepted here and the other way round. Names are normalized as
go-openapi does: dashes removed (``date-time`` is ``datetime``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from platform_api.apiextensions.schema.goregex import compile_go
from platform_api.apiextensions.schema.netfmt import (
    is_cidr,
    is_duration,
    is_email,
    is_mac,
    is_request_uri,
    parse_ip,
)

_HOSTNAME = (
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]"
    r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
)
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID4 = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"
)
_UUID5 = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"
)
_CREDIT_CARD = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})\Z"
)
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})\Z")
_ISBN13 = re.compile(r"^(?:[0-9]{13})\Z")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_RGB_PART = r"[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*"
_RGBCOLOR = re.compile(rf"^rgb\({_RGB_PART},{_RGB_PART},{_RGB_PART}\)\Z")
_BASE64 = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z"
)
_SSN = re.compile(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}\Z")
_SHORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LONG_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_hostname(value: str) -> bool:
    # compiled on first use: the Unicode classes take a moment to build
    if not compile_go(_HOSTNAME).search(value) or len(value.encode()) > 255:
        return False
    return all(len(part.encode()) <= 63 for part in value.split("."))


def is_date(value: str) -> bool:
    """``time.Parse("2006-01-02", s)``: exact widths, a real day of the month."""
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", value)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12 or day < 1 or day > _DAYS[month - 1]:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return not (month == 2 and day == 29 and not leap)


def is_datetime(value: str) -> bool:
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _DATE_TIME.search(parts[1])
    if m is None:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _isbn(value: str, version: int) -> bool:
    sanitized = re.sub(r"[\t\n\f\r -]+", "", value)
    if version == 10:
        if not _ISBN10.search(sanitized):
            return False
        total = sum((i + 1) * (ord(sanitized[i]) - 48) for i in range(9))
        total += 100 if sanitized[9] == "X" else 10 * (ord(sanitized[9]) - 48)
        return total % 11 == 0
    if not _ISBN13.search(sanitized):
        return False
    total = sum((1, 3)[i % 2] * (ord(sanitized[i]) - 48) for i in range(12))
    return (int(sanitized[12]) - ((10 - (total % 10)) % 10)) == 0


def is_credit_card(value: str) -> bool:
    sanitized = re.sub(r"[^0-9]+", "", value)
    if not _CREDIT_CARD.search(sanitized):
        return False
    total, double = 0, False
    for digit in reversed(sanitized):
        n = int(digit)
        if double:
            n *= 2
            total += n % 10 + 1 if n >= 10 else n
        else:
            total += n
        double = not double
    return total % 10 == 0


def _pattern(rx: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda value: rx.search(value) is not None


def _bson_object_id(value: str) -> bool:
    return len(value) == 24 and all(c in "0123456789abcdefABCDEF" for c in value)


FORMATS: dict[str, Callable[[str], bool]] = {
    "uri": is_request_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": lambda v: parse_ip(v, sloppy=True) is not None and "." in v,
    "ipv6": lambda v: parse_ip(v) is not None and ":" in v,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": _pattern(_UUID),
    "uuid3": _pattern(_UUID3),
    "uuid4": _pattern(_UUID4),
    "uuid5": _pattern(_UUID5),
    "isbn": lambda v: _isbn(v, 10) or _isbn(v, 13),
    "isbn10": lambda v: _isbn(v, 10),
    "isbn13": lambda v: _isbn(v, 13),
    "creditcard": is_credit_card,
    "ssn": lambda v: len(v) == 11 and _SSN.search(v) is not None,
    "hexcolor": _pattern(_HEXCOLOR),
    "rgbcolor": _pattern(_RGBCOLOR),
    "byte": _pattern(_BASE64),
    "password": lambda v: True,
    "date": is_date,
    "datetime": is_datetime,
    "duration": is_duration,
    "bsonobjectid": _bson_object_id,
    "k8sshortname": lambda v: len(v) <= 63 and _SHORT_NAME.search(v) is not None,
    "k8slongname": lambda v: len(v) <= 253 and _LONG_NAME.search(v) is not None,
}
# The formats a v1.36 server validates in CRD schemas; others are ignored (dropped).
CRD_STRING_FORMATS = frozenset(FORMATS)


def normalize(name: str) -> str:
    return name.replace("-", "")


def checker(name: str) -> Callable[[str], bool] | None:
    """The registry's validator for a format name, or None for an unknown format."""
    return FORMATS.get(normalize(name))


def crd_format(schema_type: list[str], fmt: str) -> str:
    """The format kube keeps for validation (``StripUnsupportedFormatsPostProcessor``)."""
    if not fmt:
        return ""
    kind = schema_type[0] if len(schema_type) == 1 else ""
    if kind in ("", "string"):
        return fmt if normalize(fmt) in CRD_STRING_FORMATS else ""
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if kind == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""
