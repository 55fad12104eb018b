"""kube's quantity library on an exact port of apimachinery's ``resource.ParseQuantity``.

A quantity is kept as an exact ``Decimal`` (rounded up to nano units as apimachinery does);
the CEL value is a ``kubernetes.Quantity`` message holding its normalized text, so message
equality is apimachinery's ``Quantity.Equal`` (``quantity('200M') == quantity('0.2G')``).
"""

from __future__ import annotations

import decimal
import functools
from decimal import Decimal
from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, glob, member
from platform_api.cel.protos import library_class

Quantity = library_class("kubernetes.Quantity")

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"
_SUFFIX_CHARS = set("eEinumkKMGTP")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_CTX = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_NANO = Decimal("1e-9")
_INT64_MAX = (1 << 63) - 1


class QuantityError(ValueError):
    pass


def _scan(text: str) -> tuple[bool, str, str, str]:
    """apimachinery's parseQuantityString: (positive, integer digits, fraction digits, suffix)."""
    pos, end, positive = 0, len(text), True
    if text[:1] in ("-", "+"):
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, bool]:
    """(base, exponent, binary) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], False
    if suffix in _BINARY:
        return 2, _BINARY[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in "+-" else digits
        if body.isascii() and body.isdigit():
            value = int(digits)
            if -(1 << 63) <= value < 1 << 63:
                value = (value + (1 << 31)) % (1 << 32) - (1 << 31)  # Go's int32() truncation
                return 10, value, False
    raise QuantityError(SUFFIX)


@functools.lru_cache(maxsize=1024)
def parse_quantity(text: str) -> Decimal:
    """The exact value of ``text``, or QuantityError with apimachinery's message."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Decimal(0)
    positive, num, denom, suffix = _scan(text)
    base, exponent, binary = _interpret(suffix)
    amount = Decimal(int(num + denom)).scaleb(-len(denom), _CTX)
    amount = amount.scaleb(exponent, _CTX) if base == 10 else _CTX.multiply(amount, 2**exponent)
    if amount.as_tuple().exponent < -9:  # type: ignore[operator]
        amount = amount.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CTX)
    if binary and amount > _INT64_MAX:
        amount = Decimal(_INT64_MAX)
    return amount if positive else -amount


def canonical(value: Decimal) -> str:
    if value == 0:
        return "0"
    return str(value.normalize(_CTX))


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
    if v != v.to_integral_value() or not -(1 << 63) <= v <= _INT64_MAX:
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
    return make(_CTX.add(value_of(a), other))


def _sub(a: Any, b: Any) -> Any:
    other = Decimal(b) if isinstance(b, int) else value_of(b)
    return make(_CTX.subtract(value_of(a), other))


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
