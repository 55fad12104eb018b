"""Field-level validation errors, rendered exactly as apimachinery's ``field.Error``.

Clients match on these strings (``metadata.name: Required value: name or generateName
is required``), so the formatting rules of ``ErrorBody`` are reproduced, including the
quoting of string values and the JSON rendering of composite ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from platform_api.gotext import json_string
from platform_api.gotext import quote as go_quote

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_FOUND = "FieldValueNotFound"
INTERNAL = "InternalError"

_TITLES = {
    NOT_FOUND: "Not found",
    REQUIRED: "Required value",
    DUPLICATE: "Duplicate value",
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    TOO_LONG: "Too long",
    TOO_MANY: "Too many",
    INTERNAL: "Internal error",
    TYPE_INVALID: "Invalid value",
}
# Types whose message never shows the offending value.
_VALUELESS = {REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL}


class _Omit:
    def __repr__(self) -> str:
        return "<omitted>"


OMIT: Any = _Omit()


class GoText(str):
    """A value already rendered as Go prints it (a struct's ``%#v``): shown as is."""


def render_value(value: Any) -> str:
    """Render a bad value as ``fmt.Sprintf("%v")`` / ``json.Marshal`` would."""
    if isinstance(value, GoText):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "null"
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True)
class FieldError:
    """One validation failure; ``type`` is serialized as the Status cause ``reason``."""

    type: str
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        title = _TITLES.get(self.type, self.type)
        if self.type in _VALUELESS or self.bad_value is OMIT:
            text = title
        else:
            text = f"{title}: {render_value(self.bad_value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, field, "", detail)


def named(value: Any) -> Any:
    """A bad value of a named Go string type (``LabelSelectorOperator``): kube renders it
    with json.Marshal (``"\\u0001"``, ``"\\u003c"``), not with %q as a plain string."""
    if isinstance(value, str) and not isinstance(value, GoText):
        return GoText(json_string(value))
    return value


def plain(value: Any) -> Any:
    """A bad value of Go's plain ``string`` where kube's NotSupported (which assumes an
    enum, ``named``) would marshal it: quoted with %q (a CRD schema's ``type``)."""
    return GoText(go_quote(value)) if isinstance(value, str) else value


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(INVALID, field, value, detail)


def not_supported(field: str, value: Any, valid: list[str]) -> FieldError:
    """kube's NotSupported, whose values are nearly always enums, each of a named Go
    type: a string is rendered as json.Marshal renders it (``named``); wrap a plain Go
    string in ``plain``."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError(NOT_SUPPORTED, field, named(value), detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, field, "", detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, field, value)


def not_found(field: str, value: Any) -> FieldError:
    return FieldError(NOT_FOUND, field, value)


def checked(field: str, value: Any, check: Callable[[Any], list[str]]) -> list[FieldError]:
    """Required when empty, else each of ``check``'s complaints as Invalid."""
    if not value:
        return [required(field)]
    return [invalid(field, value, message) for message in check(value)]


def each(field: str, value: Any, check: Callable[[Any], list[str]]) -> list[FieldError]:
    """Each of ``check``'s complaints as Invalid, an empty value included (kube's checks
    that word an empty name as the format it breaks, not as Required)."""
    return [invalid(field, value, message) for message in check(value)]


NONNEGATIVE = "must be greater than or equal to 0"


def nonnegative(field: str, value: Any) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if isinstance(value, int) and value < 0:
        return [invalid(field, value, NONNEGATIVE)]
    return []


def in_range(field: str, value: Any, low: int, high: int) -> list[FieldError]:
    """``InclusiveRangeError`` for an integer outside ``low``..``high``."""
    if isinstance(value, int) and not low <= value <= high:
        return [invalid(field, value, f"must be between {low} and {high}, inclusive")]
    return []


def too_long(field: str, max_length: int, unit: str = "bytes") -> FieldError:
    """``unit`` is "bytes" or "characters"; the value itself is never echoed."""
    if max_length < 0:
        return FieldError(TOO_LONG, field, "<value omitted>", "value is too long")
    noun = unit[:-1] if max_length == 1 else unit
    return FieldError(
        TOO_LONG, field, "<value omitted>", f"may not be more than {max_length} {noun}"
    )


def too_many(field: str, actual: int, max_items: int) -> FieldError:
    """field.TooMany: a negative limit (a schema's ``maxProperties: -1``) is worded
    without its number, a negative count not shown."""
    noun = "item" if max_items == 1 else "items"
    detail = f"must have at most {max_items} {noun}" if max_items >= 0 else "has too many items"
    return FieldError(TOO_MANY, field, actual if actual >= 0 else OMIT, detail)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(TYPE_INVALID, field, value, detail)


def aggregate(errors: list[FieldError]) -> str:
    """Join messages as ``utilerrors.NewAggregate``: de-duplicated, bracketed when several."""
    seen: list[str] = []
    for err in errors:
        text = str(err)
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
