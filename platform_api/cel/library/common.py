"""What every library implementation shares: the error type and CEL's value semantics in Python.

Implementations receive CEL values as Python values: str, int (int and uint alike), float, bool,
bytes, None, list, dict, ``datetime`` (timestamps), ``timedelta`` (durations) and protobuf
messages (kube's opaque types).  Raising ``EvalError`` makes the call evaluate to a CEL error
whose text is the exception's message.
"""

from __future__ import annotations

import datetime
import math
from typing import Any


class EvalError(ValueError):
    """A library function failed; the message is what cel-go would report."""


NO_SUCH_OVERLOAD = "no such overload"


def type_name(value: Any) -> str:
    """CEL's name for the type of a Python-side value (uint cannot be told from int)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes | bytearray):
        return "bytes"
    if value is None:
        return "null_type"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, datetime.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(value, datetime.timedelta):
        return "google.protobuf.Duration"
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None:
        return str(descriptor.full_name)
    return type(value).__name__


def cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers compare by value, other kinds never match."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, float) and math.isnan(a):
            return False
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        return all(k in b and cel_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, bytes | bytearray) and isinstance(b, bytes | bytearray):
        return bytes(a) == bytes(b)
    if type_name(a) != type_name(b):
        return False
    return bool(a == b)


def compare(a: Any, b: Any) -> int:
    """Ordering of two comparable CEL values (same kind, or numbers across kinds)."""
    if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        raise EvalError("NaN values cannot be ordered")
    if isinstance(a, bytes | bytearray):
        a, b = bytes(a), bytes(b)
    if isinstance(a, str):
        # Go compares strings by UTF-8 bytes, which orders like code points.
        pass
    if a < b:
        return -1
    if a > b:
        return 1
    return 0
