"""kube's format library: ``format.named(name)``, ``format.<name>()`` and ``<format>.validate(s)``.

Both ``format.named`` and ``validate`` return optionals, which a Python implementation cannot
produce; their checked calls are rewritten (see ``platform_api.cel.rewrite``) into a conditional
over the internal functions declared here, ``optional.of(...)`` and ``optional.none()``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class
from platform_api.gourl import URLError, parse_request_uri
from platform_api.validation import names

NamedFormat = library_class("kubernetes.NamedFormat")

_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_BASE64 = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z"
)
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")


def is_date(text: str) -> bool:
    """An RFC 3339 full-date, Go's layout ``2006-01-02``: digits as written, a real day."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    match = _TIME.match(parts[1])
    if match is None:
        return False
    return match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _uri(text: str) -> list[str]:
    try:
        parse_request_uri(text)
    except URLError as e:
        return [str(e)]
    return []


def _check(ok: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if ok(text) else [message]


# name -> (Name shown by kube, validator, MaxRegexSize used by the cost estimator)
FORMATS: dict[str, tuple[str, Callable[[str], list[str]], int]] = {
    "dns1123Label": ("DNS1123Label", lambda s: names.validate_name("label", s), 30),
    "dns1123Subdomain": ("DNS1123Subdomain", lambda s: names.validate_name("subdomain", s), 60),
    "dns1035Label": ("DNS1035Label", lambda s: names.validate_name("dns1035", s), 30),
    "qualifiedName": ("QualifiedName", names.is_qualified_name, 60),
    "dns1123LabelPrefix": (
        "DNS1123LabelPrefix",
        lambda s: names.validate_name("label", s, prefix=True),
        30,
    ),
    "dns1123SubdomainPrefix": (
        "DNS1123SubdomainPrefix",
        lambda s: names.validate_name("subdomain", s, prefix=True),
        60,
    ),
    "dns1035LabelPrefix": (
        "DNS1035LabelPrefix",
        lambda s: names.validate_name("dns1035", s, prefix=True),
        30,
    ),
    "labelValue": ("LabelValue", names.is_label_value, 40),
    "uri": ("URI", _uri, 1103),
    "uuid": (
        "uuid",
        _check(lambda s: bool(_UUID.match(s)), "does not match the UUID format"),
        len(_UUID.pattern),
    ),
    "byte": ("byte", _check(lambda s: bool(_BASE64.match(s)), "invalid base64"), 84),
    "date": ("date", _check(is_date, "invalid date"), len(_TIME.pattern)),
    "datetime": ("datetime", _check(_is_datetime, "invalid datetime"), len(_TIME.pattern)),
}
_BY_NAME = {spec[0]: key for key, spec in FORMATS.items()}


def errors_of(fmt: Any, text: str) -> list[str]:
    return FORMATS[_BY_NAME[fmt.name]][1](text)


def max_regex_size(name: str) -> int | None:
    key = _BY_NAME.get(name)
    return FORMATS[key][2] if key else None


_F = "kubernetes.NamedFormat"
# Declared for the type checker: what kube declares.
FUNCTIONS = [
    Function("validate", [member("format-validate", (_F, "string"), "optional(list(string))")]),
    Function("format.named", [glob("format-named", ("string",), f"optional({_F})")]),
    *[
        Function(
            f"format.{key}",
            [
                glob(f"format.{key}", (), _F, lambda spec=spec: NamedFormat(name=spec[0])),
            ],
        )
        for key, spec in FORMATS.items()
    ],
]

# Runtime helpers the rewrite calls (never declared to the checker).
KNOWN, GET, VALID, ERRORS = "@format_known", "@format_get", "@format_valid", "@format_errors"
RUNTIME = [
    Function(KNOWN, [glob(KNOWN, ("string",), "bool", lambda s: s in FORMATS)]),
    Function(GET, [glob(GET, ("string",), _F, lambda s: NamedFormat(name=FORMATS[s][0]))]),
    Function(VALID, [member(VALID, (_F, "string"), "bool", lambda f, s: not errors_of(f, s))]),
    Function(ERRORS, [member(ERRORS, (_F, "string"), "list(string)", errors_of)]),
]
