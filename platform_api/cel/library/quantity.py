"""kube's quantity library on ``platform_api.quantity`` (apimachinery's ``resource.ParseQuantity``).

A quantity is kept as an exact ``Decimal`` (rounded up to nano units as apimachinery does);
the CEL value is a ``kubernetes.Quantity`` message holding its normalized text, so message
equality is apimachinery's ``Quantity.Equal`` (``quantity('200M') == quantity('0.2G')``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class
from platform_api.quantity import (
    CTX,
    FORMAT_WRONG,  # noqa: F401  (its callers' import)
    INT64_MAX,
    QuantityError,
    parse_quantity,
)

Quantity = library_class("kubernetes.Quantity")


def canonical(value: Decimal) -> str:
    if value == 0:
        return "0"
    return str(value.normalize(CTX))


def make(value: Decimal) -> Any:
    return Quantity(value=canonical(value))


def value_of(q: Any) -> Decimal:
    return Decimal(q.value)


def to_quantity(text: str) -> Any:
    try:
        return make(parse_quantity(text))
    except QuantityError as e:
        raise EvalError(str(e)) from None


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _cmp(a: Any, b: Any) -> int:
    x, y = value_of(a), value_of(b)
    return (x > y) - (x < y)


def _as_int(q: Any) -> int | None:
    v = value_of(q)
    if v != v.to_integral_value() or not -(1 << 63) <= v <= INT64_MAX:
        return None
    return int(v)


def as_integer(q: Any) -> int:
    result = _as_int(q)
    if result is None:
        raise EvalError("cannot convert value to integer")
    return result


def _sign(q: Any) -> int:
    v = value_of(q)
    return (v > 0) - (v < 0)


def _add(a: Any, b: Any) -> Any:
    other = Decimal(b) if isinstance(b, int) else value_of(b)
    return make(CTX.add(value_of(a), other))


def _sub(a: Any, b: Any) -> Any:
    other = Decimal(b) if isinstance(b, int) else value_of(b)
    return make(CTX.subtract(value_of(a), other))


_Q = "kubernetes.Quantity"
FUNCTIONS = [
    Function("quantity", [glob("string_to_quantity", ("string",), _Q, to_quantity)]),
    Function("isQuantity", [glob("is_quantity_string", ("string",), "bool", is_quantity)]),
    Function("sign", [glob("quantity_sign", (_Q,), "int", _sign)]),
    Function(
        "isGreaterThan",
        [
            member("quantity_is_greater_than", (_Q, _Q), "bool", lambda a, b: _cmp(a, b) == 1),
        ],
    ),
    Function(
        "isLessThan",
        [
            member("quantity_is_less_than", (_Q, _Q), "bool", lambda a, b: _cmp(a, b) == -1),
        ],
    ),
    Function("compareTo", [member("quantity_compare_to", (_Q, _Q), "int", _cmp)]),
    Function(
        "asApproximateFloat",
        [
            member("quantity_get_float", (_Q,), "double", lambda q: float(value_of(q))),
        ],
    ),
    Function("asInteger", [member("quantity_get_int", (_Q,), "int", as_integer)]),
    Function(
        "isInteger",
        [member("quantity_is_integer", (_Q,), "bool", lambda q: _as_int(q) is not None)],
    ),
    Function(
        "add",
        [
            member("quantity_add", (_Q, _Q), _Q, _add),
            member("quantity_add_int", (_Q, "int"), _Q, _add),
        ],
    ),
    Function(
        "sub",
        [
            member("quantity_sub", (_Q, _Q), _Q, _sub),
            member("quantity_sub_int", (_Q, "int"), _Q, _sub),
        ],
    ),
]
