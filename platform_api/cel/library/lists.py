"""kube's lists library: isSorted, sum, min, max, indexOf, lastIndexOf (k8s.io/apiserver)."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable
from typing import Any

from platform_api.cel.library.common import EvalError, cel_equal, compare
from platform_api.cel.library.decl import Function, Overload, member

_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "duration")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_ZERO: dict[str, Any] = {"int": 0, "uint": 0, "double": 0.0, "duration": datetime.timedelta()}


def is_sorted(items: list[Any]) -> bool:
    return all(compare(a, b) <= 0 for a, b in itertools.pairwise(items))


def _summer(kind: str) -> Callable[[list[Any]], Any]:
    def total(items: list[Any]) -> Any:
        acc = _ZERO[kind]
        for item in items:
            acc = acc + item
            if kind == "int" and not _INT64[0] <= acc <= _INT64[1]:
                raise EvalError("integer overflow")
            if kind == "uint" and acc >= 1 << 64:
                raise EvalError("unsigned integer overflow")
        return acc

    return total


def _extreme(name: str, prefer: int) -> Callable[[list[Any]], Any]:
    def pick(items: list[Any]) -> Any:
        if not items:
            raise EvalError(f"{name} called on empty list")
        result = items[0]
        for item in items[1:]:
            if compare(result, item) == prefer:
                result = item
        return result

    return pick


def index_of(items: list[Any], value: Any) -> int:
    for i, item in enumerate(items):
        if cel_equal(item, value):
            return i
    return -1


def last_index_of(items: list[Any], value: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if cel_equal(items[i], value):
            return i
    return -1


def _each(kinds: tuple[str, ...], make: Callable[[str], Overload]) -> list[Overload]:
    return [make(kind) for kind in kinds]


FUNCTIONS = [
    Function(
        "isSorted",
        _each(
            _COMPARABLE,
            lambda k: member(f"list_{k}_is_sorted_bool", (f"list({k})",), "bool", is_sorted),
        ),
    ),
    Function(
        "sum",
        _each(_SUMMABLE, lambda k: member(f"list_{k}_sum_{k}", (f"list({k})",), k, _summer(k))),
    ),
    Function(
        "max",
        _each(
            _COMPARABLE,
            lambda k: member(f"list_{k}_max_{k}", (f"list({k})",), k, _extreme("max", -1)),
        ),
    ),
    Function(
        "min",
        _each(
            _COMPARABLE,
            lambda k: member(f"list_{k}_min_{k}", (f"list({k})",), k, _extreme("min", 1)),
        ),
    ),
    Function("indexOf", [member("list_a_index_of_int", ("list(A)", "A"), "int", index_of)]),
    Function(
        "lastIndexOf",
        [
            member("list_a_last_index_of_int", ("list(A)", "A"), "int", last_index_of),
        ],
    ),
]
