"""How Go prints and compares the JSON values of custom resources.

Custom resources are ``map[string]interface{}`` trees in kube: integers within int64 are
``int64``, every other number ``float64``. Messages print floats with ``%v`` and composite
values with ``json.Marshal``, and comparisons use ``reflect.DeepEqual``, where ``1`` and
``1.0`` differ and a bool is never a number. Python's defaults blur all three, so the schema
code renders and compares through these helpers.
"""

from __future__ import annotations

import math
from typing import Any

from platform_api.gotext import INT64_MAX, INT64_MIN, format_float
from platform_api.gotext import marshal as go_json
from platform_api.validation.field import GoText

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "bad_value",
    "deep_equal",
    "format_fixed",
    "format_float",
    "go_json",
    "go_kind",
    "is_go_int",
    "is_number",
    "json_float",
]


def is_go_int(value: Any) -> bool:
    """An ``int64`` once decoded by kube (bools are not; huge integers become floats)."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def is_number(value: Any) -> bool:
    return (type(value) is int) or (type(value) is float)


def format_fixed(value: float) -> str:
    """``strconv.FormatFloat(f, 'f', -1, 64)``: shortest digits, never an exponent."""
    return format_float(value, fixed=True)


def json_float(value: float) -> str:
    """A float as Go's ``encoding/json`` writes it."""
    return format_float(value, json=True)


def bad_value(value: Any) -> Any:
    """A value for ``FieldError``, shown as Go's ``ErrorBody`` would show it."""
    if type(value) is float:
        return GoText(format_float(value))
    if type(value) is int and not is_go_int(value):
        return GoText(format_float(float(value)))
    if isinstance(value, dict | list):
        return GoText(go_json(value))
    return value


def deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` on decoded JSON: types must match exactly."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            key in b and deep_equal(value, b[key]) for key, value in a.items()
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is float and math.isnan(a):
        return False
    return bool(a == b)


def go_kind(value: Any) -> str:
    """The JSON type name kube-openapi infers for a value (``schemaInfoForType``)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if type(value) is int:
        return "integer" if is_go_int(value) else "number"
    if type(value) is float:
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
