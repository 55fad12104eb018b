"""JSON values printed as Go prints their decoded form: ``fmt``'s ``%v`` and ``encoding/json``.

kube's JSONPath prints scalars with ``fmt.Fprint`` and maps and lists with
``json.Marshal``, and its error texts embed ``%v`` of values.  The data is what kube
holds for an unstructured object: ``map[string]interface{}``, ``[]interface{}``,
``string``, ``int64``, ``float64``, ``bool`` and nil, which are Python's dict, list,
str, int, float, bool and None here.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson


class _NoValue:
    """Go's invalid ``reflect.Value``: what kube evaluates on when the data is nil."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Any = _NoValue()


class GoInt(int):
    """An integer literal of a template (Go ``int``; the data's integers are ``int64``)."""

    __slots__ = ()
    GO_TYPE = "int"


class GoByte(int):
    """A byte of a string, as ``*`` and ``..`` yield them (Go ``uint8``)."""

    __slots__ = ()
    GO_TYPE = "uint8"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _shortest(value: float) -> tuple[str, int]:
    """The shortest digits that round-trip a positive float, and the decimal point's place.

    ``0.d1d2... * 10**point`` is the value, as strconv's decimal form.
    """
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    point = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(stripped))
    return stripped.rstrip("0"), point


def _exponent_form(digits: str, point: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exponent = point - 1
    sign = "-" if exponent < 0 else "+"
    return f"{mantissa}e{sign}{abs(exponent):02d}"


def _plain_form(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def format_float(value: float, *, json: bool = False) -> str:
    """Go's ``%v`` of a float64 (``strconv`` 'g', shortest), or ``json.Marshal``'s form."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = _shortest(abs(value))
    if json:
        if 1e-6 <= abs(value) < 1e21:
            return sign + _plain_form(digits, point)
        text = _exponent_form(digits, point)
        if text[-4:-1] == "e-0":  # encoding/json trims e-07 to e-7
            text = text[:-2] + text[-1]
        return sign + text
    if point - 1 < -4 or point - 1 >= 6:  # 'g' with shortest digits switches at 1e6 / 1e-5
        return sign + _exponent_form(digits, point)
    return sign + _plain_form(digits, point)


def sprint(value: Any) -> str:
    """``fmt.Sprint`` of a decoded JSON value: ``map[a:1 b:[x y]]``, ``<nil>`` for nil."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(v) for v in value) + "]"
    if value is NO_VALUE:
        return "<invalid reflect.Value>"
    return str(value)


def go_type(value: Any) -> str:
    """The Go type kube's decoded value has, as ``%v`` of its ``reflect.Type`` prints it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return getattr(value, "GO_TYPE", "int64")
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "interface {}"


def _string(value: str) -> str:
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # lone surrogates: Go's decoder never yields them
        text = orjson.dumps(_SURROGATE.sub("\ufffd", value)).decode()
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        for raw, escaped in _HTML_ESCAPES:
            text = text.replace(raw, escaped)
    return text


_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def marshal(value: Any) -> str:
    """``json.Marshal``: compact, map keys sorted, HTML characters escaped."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value, json=True)
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{_string(k)}:{marshal(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(marshal(v) for v in value) + "]"
    return "null"  # nil, and kube's invalid value (which makes Go's encoder panic)


def marshal_indent(value: Any, indent: str = "    ", depth: int = 0) -> str:
    """``json.MarshalIndent(value, "", indent)``."""
    if isinstance(value, dict) and value:
        items = [
            f"{_string(k)}: {marshal_indent(v, indent, depth + 1)}"
            for k, v in sorted(value.items())
        ]
    elif isinstance(value, list) and value:
        items = [marshal_indent(v, indent, depth + 1) for v in value]
    else:
        return marshal(value)
    inner = "\n" + indent * (depth + 1)
    open_, close = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return open_ + inner + ("," + inner).join(items) + "\n" + indent * depth + close
