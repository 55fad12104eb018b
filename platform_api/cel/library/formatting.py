"""``<string>.format(<list>)`` and ``strings.quote`` as cel-go's strings extension (v1 formatter).

Clauses: ``%s %d %f %e %b %o %x %X`` with an optional ``.N`` precision, ``%%`` for a percent sign.
Fixed and scientific clauses go through golang.org/x/text's en_US printer in cel-go, which groups
thousands (``1,234.500000``) and spells infinity ``∞``; this module does the same.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

from platform_api.cel.library.common import EvalError, type_name
from platform_api.gotext import format_float, go_time

_DEFAULT_PRECISION = 6
_STRING_TYPES = (
    "strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"
)


def _x_text_special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return None


def _fixed(value: float, precision: int) -> str:
    special = _x_text_special(value)
    if special is not None:
        return special
    text = f"{value:,.{precision}f}"
    return "0" + text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text


def _scientific(value: float, precision: int) -> str:
    special = _x_text_special(value)
    return special if special is not None else f"{value:.{precision}e}"


def to_string(value: Any) -> str:
    """The ``%s`` clause."""
    if isinstance(value, list):
        return "[" + ", ".join(_quoted(v, _clause_for(v)(v)) for v in value) + "]"
    if isinstance(value, dict):
        return _format_map(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, datetime.datetime):
        return _timestamp_text(value)
    if isinstance(value, datetime.timedelta):
        return _duration_text(value)
    raise EvalError(
        f"string clause can only be used on {_STRING_TYPES}, was given {type_name(value)}"
    )


def _timestamp_text(value: datetime.datetime) -> str:
    fraction = f".{value.microsecond:06d}".rstrip("0") if value.microsecond else ""
    return go_time(value, fraction)


def _duration_text(value: datetime.timedelta) -> str:
    micros = value // datetime.timedelta(microseconds=1)
    text = str(decimal.Decimal(micros).scaleb(-6).normalize())
    if "E" in text:
        text = f"{decimal.Decimal(micros).scaleb(-6):f}".rstrip("0").rstrip(".")
    return text + "s"


def _clause_for(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return _decimal
    if isinstance(value, float):
        return lambda v: f"{v:.{_DEFAULT_PRECISION}f}"
    if isinstance(value, datetime.datetime):
        return lambda v: f'timestamp("{_timestamp_text(v)}")'
    if isinstance(value, datetime.timedelta):
        return lambda v: f'duration("{_duration_text(v)}")'
    if isinstance(value, list | dict | str | bytes | bytearray | bool) or value is None:
        return to_string
    raise EvalError(f"no formatting function for {type_name(value)}")


def _quoted(value: Any, text: str) -> str:
    if isinstance(value, str):
        return quote(text)
    if isinstance(value, bytes | bytearray):
        return "b" + quote(text)
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return quote(text)
    return text


def _format_map(value: dict[Any, Any]) -> str:
    pairs = []
    for key, item in value.items():
        if isinstance(key, str | bool):
            key_text = _quoted(key, to_string(key))
        elif isinstance(key, int):
            key_text = str(key)
        else:
            raise EvalError(f"no formatting function for map key of type {type_name(key)}")
        pairs.append((key_text, _quoted(item, _clause_for(item)(item))))
    pairs.sort(key=lambda p: p[0])
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


def _decimal(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise EvalError(f"decimal clause can only be used on integers, was given {type_name(value)}")


def _float_arg(value: Any, clause: str) -> float:
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if isinstance(value, float):
        return value
    raise EvalError(f"{clause} clause can only be used on doubles, was given {type_name(value)}")


def _binary(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return format(value, "b")
    raise EvalError(
        f"only integers and bools can be formatted as binary, was given {type_name(value)}"
    )


def _octal(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return format(value, "o")
    raise EvalError(f"octal clause can only be used on integers, was given {type_name(value)}")


def _hex(value: Any, upper: bool) -> str:
    if isinstance(value, str):
        text = value.encode().hex()
    elif isinstance(value, bytes | bytearray):
        text = bytes(value).hex()
    elif isinstance(value, int) and not isinstance(value, bool):
        text = format(value, "x")
    else:
        raise EvalError(
            "only integers, byte buffers, and strings can be "
            f"formatted as hex, was given {type_name(value)}"
        )
    return text.upper() if upper else text


def _clause(spec: str, precision: int | None, arg: Any) -> str:
    prec = _DEFAULT_PRECISION if precision is None else precision
    if spec == "s":
        return to_string(arg)
    if spec == "d":
        return _decimal(arg)
    if spec == "f":
        return _fixed(_float_arg(arg, "fixed-point"), prec)
    if spec == "e":
        return _scientific(_float_arg(arg, "scientific"), prec)
    if spec == "b":
        return _binary(arg)
    if spec in "xX":
        return _hex(arg, spec == "X")
    return _octal(arg)


def format_string(fmt: str, args: list[Any]) -> str:
    out: list[str] = []
    i = arg_index = 0
    while i < len(fmt):
        if fmt[i] != "%":
            out.append(fmt[i])
            i += 1
            continue
        if i + 1 < len(fmt) and fmt[i + 1] == "%":
            out.append("%")
            i += 2
            continue
        if arg_index >= len(args):
            raise EvalError(f"index {arg_index} out of range")
        if i + 1 >= len(fmt):
            raise EvalError("unexpected end of string")
        i, precision = _precision(fmt, i + 1)
        spec = fmt[i]
        if spec not in "sdfebxXo":
            raise EvalError(
                f'could not parse formatting clause: unrecognized formatting clause "{spec}"'
            )
        try:
            out.append(_clause(spec, precision, args[arg_index]))
        except EvalError as e:
            raise EvalError(f"error during formatting: {e}") from None
        i += 1
        arg_index += 1
    return "".join(out)


def _precision(fmt: str, i: int) -> tuple[int, int | None]:
    if fmt[i] != ".":
        return i, None
    j = i + 1
    while True:
        if j >= len(fmt):
            raise EvalError(
                "could not parse formatting clause: error while parsing precision: "
                "could not find end of precision specifier"
            )
        if not ("0" <= fmt[j] <= "9"):
            break
        j += 1
    if j == i + 1:
        raise EvalError(
            "could not parse formatting clause: error while parsing precision: error while "
            'converting precision to integer: strconv.Atoi: parsing "": invalid syntax'
        )
    return j, int(fmt[i + 1 : j])


_QUOTE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(s: str) -> str:
    return '"' + "".join(_QUOTE_ESCAPES.get(c, c) for c in s) + '"'
