"""Selecting from a ``dyn`` value as cel-go does, for the runtime's second try.

cel-go qualifies a field or key of a value that is no map (null: an admission
request's ``object`` on DELETE; an int behind ``dyn``) as a missing key, ``no such key:
data``, and ``has()`` of it is false; cel-cpp refuses the select itself (``Applying
SELECT to non-message type``).  A program whose run fails so is run again with its
selects and indexes on ``dyn`` operands rewritten to these functions (see
``environment``): they cost a conversion of the operand, so only that second run pays.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.library.common import EvalError, type_name
from platform_api.cel.library.decl import Function, glob
from platform_api.gotext import format_float

SELECT, HAS, INDEX = "@dyn_select", "@dyn_has", "@dyn_index"


def _key_text(key: Any) -> str:
    """Go's ``%v`` of a CEL value used as a key."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return format_float(key)
    return str(key)


def _list_index(items: list[Any], key: Any) -> int:
    """cel-go's IndexOrError, then the bounds."""
    if isinstance(key, float):
        if not key.is_integer():
            raise EvalError(f"unsupported index value {_key_text(key)} in list")
    elif isinstance(key, bool) or not isinstance(key, int):
        raise EvalError(f"unsupported index type '{type_name(key)}' in list")
    position = int(key)
    if not 0 <= position < len(items):
        raise EvalError(f"index out of bounds: {_key_text(key)}")
    return position


def has(value: Any, field: str) -> bool:
    if isinstance(value, dict):
        return field in value
    if isinstance(value, list):
        _list_index(value, field)
    return False


def index(value: Any, key: Any) -> Any:
    """``value[key]``, and ``value.key`` (a select is an index by the field's name)."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        raise EvalError(f"no such key: {_key_text(key)}")
    if isinstance(value, list):
        return value[_list_index(value, key)]
    raise EvalError(f"no such key: {_key_text(key)}")


FUNCTIONS = [
    Function(SELECT, [glob(SELECT, ("A", "string"), "dyn", index)]),
    Function(HAS, [glob(HAS, ("A", "string"), "bool", has)]),
    Function(INDEX, [glob(INDEX, ("A", "B"), "dyn", index)]),
]
