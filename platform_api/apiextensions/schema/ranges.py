"""kube-openapi's number validator: ranges, bounds and multipleOf, with Go's arithmetic.

Integers are compared as ``int64`` against bounds truncated to ``int64`` (a maximum of 10.5
lets 10 pass and rejects 11 with "less than or equal to 10"), floats as ``float64``; a bound
or value that does not fit the schema's type and format adds kube-openapi's "Checked value
must be of type ..." error.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from platform_api.apiextensions.schema.gotext import (
    INT64_MIN,
    format_fixed,
    format_float,
    is_go_int,
)
from platform_api.apiextensions.schema.oerrors import OErr, composite

_MAX_JSON_INT = float(2**53 - 1)


def is_json_integer(value: float) -> bool:
    """go-openapi's ``IsFloat64AJSONInteger``."""
    if math.isnan(value) or math.isinf(value) or abs(value) > _MAX_JSON_INT:
        return False
    rounded = math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)
    if value == rounded:
        return True
    if rounded == 0:
        return False
    return abs(value - rounded) < 1e-9 * abs(rounded)


def _go_int64(value: float) -> int:
    """Go's ``int64(f)`` on amd64: truncation, out-of-range values become MinInt64."""
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return INT64_MIN
    return int(value)


def _fits(value: Any, type_name: str, fmt: str) -> bool:
    if type_name == "integer":
        if type(value) is float:
            text = format_fixed(value)
            if not text.lstrip("-").isdigit():
                return False
            number = int(text)
        else:
            number = value
        bits = 32 if fmt == "int32" else 64
        return -(2 ** (bits - 1)) <= number < 2 ** (bits - 1)
    if fmt == "float":
        try:
            struct.pack("<f", float(value))
        except OverflowError:
            return False
    return True


def range_error(value: Any, type_name: str, fmt: str, prefix: str, path: str) -> OErr | None:
    """``IsValueValidAgainstRange``: does a number fit the schema's type and format?"""
    if _fits(value, type_name, fmt):
        return None
    if fmt:
        return composite(f"{prefix} value must be of type {type_name} with format {fmt} in {path}")
    return composite(f"{prefix} value must be of type {type_name} (default format) in {path}")


def _show(value: Any) -> str:
    return format_float(value) if type(value) is float else str(value)


def _multiple(path: str, data: Any, factor: Any) -> OErr | None:
    if factor <= 0:
        text = f"factor MultipleOf declared for {path} must be positive: {_show(factor)}"
        return OErr("MultipleOfPositive", path, factor, text)
    if type(data) is int:
        ok = data % factor == 0
    else:
        ratio = 1 / factor * data if factor < 1 else data / factor
        ok = is_json_integer(ratio)
    if ok:
        return None
    return OErr("MultipleOf", path, data, f"{path} in body should be a multiple of {_show(factor)}")


def _bound(path: str, data: Any, bound: Any, exclusive: bool, upper: bool) -> OErr | None:
    if upper:
        failed = data >= bound if exclusive else data > bound
        words = "less than" if exclusive else "less than or equal to"
    else:
        failed = data <= bound if exclusive else data < bound
        words = "greater than" if exclusive else "greater than or equal to"
    if not failed:
        return None
    return OErr(
        "Max" if upper else "Min", path, data, f"{path} in body should be {words} {_show(bound)}"
    )


def _native(data: Any, bound: float, native: bool) -> tuple[Any, Any]:
    """The value and bound as Go compares them: int64 with a truncated bound, else float64."""
    if native and type(data) is int:
        return data, _go_int64(bound)
    return float(data), bound


def number_errors(v: Any, data: Any, path: str) -> list[OErr]:
    """The errors of ``numberValidator.Validate`` in kube-openapi's order."""
    if type(data) is int and not is_go_int(data):
        data = float(data)
    errs: list[OErr] = []
    checked = range_error(data, v.num_type, v.num_format, "Checked", path)
    if checked is not None:
        errs.append(checked)
    groups: list[OErr] = []
    checks = (
        ("MultipleOf", v.multiple_of, None),
        ("Minimum boundary", v.minimum, False),
        ("Maximum boundary", v.maximum, True),
    )
    for prefix, bound, upper in checks:
        if bound is None:
            continue
        bad = range_error(bound, v.num_type, v.num_format, prefix, path)
        if bad is not None:
            groups.append(bad)
        value, limit = _native(data, bound, bad is None)
        if upper is None:
            err = _multiple(path, value, limit)
        else:
            exclusive = v.exclusive_maximum if upper else v.exclusive_minimum
            err = _bound(path, value, limit, exclusive, upper)
        if err is not None:
            groups.append(err)
    for err in groups:
        if all(e.message != err.message for e in errs):
            errs.append(err)
    return errs
