"""Standard functions the checker must see declared again: cross-type numeric ordering, and
``string()`` with kube's ``ip``/``cidr`` overloads.

cel-cpp refuses extra overloads on a standard function, so these functions are excluded from
its standard library and declared here in full (cel-go's overload ids).  Only declarations:
cel-cpp's runtime keeps its own bindings, which already order numbers across types.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, Overload, glob

_OPS = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_SAME = {
    "int64": "int",
    "uint64": "uint",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "bool": "bool",
    "timestamp": "timestamp",
    "duration": "duration",
}
_NUMERIC = {"int64": "int", "uint64": "uint", "double": "double"}


def _ordering(name: str, prefix: str) -> Function:
    overloads: list[Overload] = [
        glob(f"{prefix}_{oid}", (t, t), "bool") for oid, t in _SAME.items()
    ]
    for lid, lt in _NUMERIC.items():
        for rid, rt in _NUMERIC.items():
            if lid != rid:
                overloads.append(glob(f"{prefix}_{lid}_{rid}", (lt, rt), "bool"))
    return Function(name, overloads)


ORDERING = [_ordering(name, prefix) for name, prefix in _OPS.items()]

STRING = Function(
    "string",
    [
        glob("string_to_string", ("string",), "string"),
        glob("int64_to_string", ("int",), "string"),
        glob("uint64_to_string", ("uint",), "string"),
        glob("double_to_string", ("double",), "string"),
        glob("bytes_to_string", ("bytes",), "string"),
        glob("timestamp_to_string", ("timestamp",), "string"),
        glob("duration_to_string", ("duration",), "string"),
    ],
)

REDECLARED = [*_OPS, "string"]


def map_insert(target: dict[Any, Any], key: Any, value: Any = None) -> dict[Any, Any]:
    """``cel.@mapInsert``: transformMap's accumulator step (one entry, or a whole map)."""
    entries = key if isinstance(key, dict) and value is None else {key: value}
    out = dict(target)
    for k, v in entries.items():
        if k in out:
            raise EvalError(f"insert failed: key {k} already exists")
        out[k] = v
    return out


def list_range(n: int) -> list[int]:
    """cel-go's lists.range: no elements for a negative count (cel-cpp's raises)."""
    return list(range(n)) if n > 0 else []


RUNTIME = [
    Function("lists.range", [glob("list_range", ("int",), "list(int)", list_range)]),
    Function(
        "cel.@mapInsert",
        [
            glob("@mapInsert_map_key_value", ("map(K, V)", "K", "V"), "map(K, V)", map_insert),
            glob("@mapInsert_map_map", ("map(K, V)", "map(K, V)"), "map(K, V)", map_insert),
        ],
    ),
]
