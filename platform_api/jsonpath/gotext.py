"""Go printing for JSONPath: its own value kinds over ``platform_api.gotext``.

kube's JSONPath prints scalars with ``fmt.Fprint`` and maps and lists with
``json.Marshal``, and its error texts embed ``%v`` of values.  The data is what kube
holds for an unstructured object: ``map[string]interface{}``, ``[]interface{}``,
``string``, ``int64``, ``float64``, ``bool`` and nil, which are Python's dict, list,
str, int, float, bool and None here.
"""

from __future__ import annotations

from typing import Any

from platform_api import gotext
from platform_api.gotext import format_float, go_type, json_string, marshal

__all__ = ["NO_VALUE", "GoByte", "GoInt", "format_float", "go_type", "marshal", "sprint"]


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


def sprint(value: Any) -> str:
    """``fmt.Sprint`` (kube's invalid value prints as Go's invalid ``reflect.Value``)."""
    if value is NO_VALUE:
        return "<invalid reflect.Value>"
    return gotext.sprint(value)


def marshal_indent(value: Any, indent: str = "    ", depth: int = 0) -> str:
    """``json.MarshalIndent(value, "", indent)``."""
    if isinstance(value, dict) and value:
        items = [
            f"{json_string(k)}: {marshal_indent(v, indent, depth + 1)}"
            for k, v in sorted(value.items())
        ]
    elif isinstance(value, list) and value:
        items = [marshal_indent(v, indent, depth + 1) for v in value]
    else:
        return marshal(value)
    inner = "\n" + indent * (depth + 1)
    open_, close = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return open_ + inner + ("," + inner).join(items) + "\n" + indent * depth + close
