"""Filter comparisons, as Go's ``text/template`` ``eq``/``lt``/... that kube's JSONPath uses.

Only two values of the same basic kind compare: ``1 == 1.0`` is an error (an int64
against a float64), and so is ordering booleans; maps, lists and nil are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.jsonpath.parser import JSONPathError

_BOOL, _INT, _FLOAT, _STRING = range(4)


def _kind(value: Any) -> int:
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _INT
    if isinstance(value, float):
        return _FLOAT
    if isinstance(value, str):
        return _STRING
    raise JSONPathError("invalid type for comparison")


def _same_kind(left: Any, right: Any) -> int:
    kind = _kind(left)
    if _kind(right) != kind:
        raise JSONPathError("incompatible types for comparison")
    return kind


def equal(left: Any, right: Any) -> bool:
    _same_kind(left, right)
    return bool(left == right)


def not_equal(left: Any, right: Any) -> bool:
    return not equal(left, right)


def less(left: Any, right: Any) -> bool:
    if _same_kind(left, right) == _BOOL:
        raise JSONPathError("invalid type for comparison")
    return bool(left < right)


def less_equal(left: Any, right: Any) -> bool:
    return less(left, right) or equal(left, right)


def greater(left: Any, right: Any) -> bool:
    return not less_equal(left, right)


def greater_equal(left: Any, right: Any) -> bool:
    return not less(left, right)


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": less,
    ">": greater,
    "==": equal,
    "!=": not_equal,
    "<=": less_equal,
    ">=": greater_equal,
}
