"""Whether an applied configuration fits its schema: structured-merge-diff's validation of
the typed patch object, whose refusals kube passes on as a bare 500 (``failed to create
typed patch object``).

Three problems are found: a field a struct does not declare (SMD then stops reading that
struct), a value of the wrong type for its schema (a number, string or boolean field, a
list or a map), and an item a set or keyed list holds twice (its key, defaults filled
in).  Messages print the value as SMD prints its ``value.Value`` wrapper.  Fields without
a fixed type (int-or-string, quantities, free-form JSON) take any value.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from platform_api.codec.bounds import scalars
from platform_api.fieldmanager.typed import INDEXED, KEYED, LEAF, MAP, SET, STRUCT, Shape, Typed
from platform_api.gotext import go_syntax, go_type, sprint
from platform_api.gotext import quote as go_quote
from platform_api.scheme.schemas import Node


def problems(typed: Typed, node: Node, value: Any) -> list[str]:
    """Every problem, ``<path>: <what>``, in the body's order (SMD walks Go maps, in no
    fixed order)."""
    out: list[str] = []
    _walk(typed, node, value, "", out)
    return out


def message(found: list[str]) -> str:
    """SMD's ValidationErrors text: one problem as it is, several as a list."""
    if len(found) == 1:
        return found[0]
    return "errors:\n  " + "\n  ".join(found)


def _walk(typed: Typed, node: Node, value: Any, where: str, out: list[str]) -> None:
    shape = typed.shape(node, value)
    wrong = _type_problem(shape.node, value)
    if wrong is not None:
        out.append(f"{where}: {wrong}")
        return
    if shape.kind == LEAF:  # atomic: merged whole, but its contents are checked alike
        shape = _contents(shape, value)
        if shape.kind == LEAF:
            return
    if isinstance(value, dict):
        open_ = shape.kind != STRUCT or shape.node.get("x-kubernetes-preserve-unknown-fields")
        for name, child in value.items():
            child_node, named = typed.field(shape, name)
            if not named and not open_:
                out.append(f"{where}.{name}: field not declared in schema")
                return  # SMD stops reading a struct at a field it does not declare
            _walk(typed, child_node, child, f"{where}.{name}", out)
        return
    items = typed.items(shape)
    seen: set[str] = set()
    for index, item in enumerate(value):
        unkeyed = _unkeyed(shape, item, typed)
        if unkeyed:  # SMD cannot name the item, so it reads no further in the list
            out.append(f"{where}: element {index}: {unkeyed}")
            return
        element = smd_element(typed.item_element(shape, item, index))
        if shape.kind in (SET, KEYED):  # an applier may not name an item twice
            if element in seen:
                out.append(f"{where}: duplicate entries for key {element}")
            seen.add(element)
        _walk(typed, items, item, where + element, out)


def _contents(shape: Shape, value: Any) -> Shape:
    """An atomic struct, map or list read as SMD's validation reads it: by its schema."""
    node = shape.node
    if isinstance(value, dict) and "properties" in node:
        return Shape(STRUCT, node)
    if isinstance(value, dict) and isinstance(node.get("additionalProperties"), dict):
        return Shape(MAP, node)
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return Shape(INDEXED, node)
    return shape


def _unkeyed(shape: Shape, item: Any, typed: Typed) -> str:
    """Why SMD cannot make a set's or keyed list's path element of ``item``, or ""."""
    if shape.kind == SET:
        if isinstance(item, dict):
            return "associative list without keys has an element that's a map type"
        if isinstance(item, list):
            return "not supported: associative list with lists as elements"
        if item is None:
            return "associative list without keys has an element that's an explicit null"
    elif shape.kind == KEYED:
        if item is None:
            return "associative list with keys may not have a null element"
        if not isinstance(item, dict):
            return "associative list with keys may not have non-map elements"
        defaults = typed.key_defaults(shape)
        if shape.keys and not any(k in item or k in defaults for k in shape.keys):
            keys = "[" + " ".join(go_quote(k) for k in shape.keys) + "]"
            return (
                f"associative list with keys has an element that omits all key fields {keys} "
                "(and doesn't have default values for any key fields)"
            )
    return ""


def _type_problem(node: Node, value: Any) -> str | None:
    """SMD's validateScalar, and its list and map readers, for a node with a fixed type;
    a quantity is an untyped scalar (any scalar), an int-or-string takes anything."""
    if value is None or node.get("x-kubernetes-int-or-string"):
        return None
    if "oneOf" in node:
        if {"type": "number"} in node["oneOf"] and isinstance(value, dict | list):
            return f"expected any scalar, got &{{{sprint(value)}}}"
        return None
    kind = node.get("type")
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"expected numeric (int or float), got {go_type(value)}"
    elif kind == "string" and node.get("format") != "int-or-string":
        if not isinstance(value, str):
            return f"expected string, got &value.valueUnstructured{{Value:{go_syntax(value)}}}"
    elif kind == "boolean":
        if not isinstance(value, bool):
            return f"expected boolean, got &{{{sprint(value)}}}"
    elif kind == "array":
        if not isinstance(value, list):
            return f"expected list, got &{{{sprint(value)}}}"
    elif ("properties" in node or "additionalProperties" in node) and not isinstance(value, dict):
        return f"expected map, got &{{{sprint(value)}}}"
    return None


def has_conversions(document: Any) -> bool:
    """Whether a patch or configuration holds a number the converter would change or
    refuse (a float, or an integer past int32): if not, ``convert_numbers`` has nothing
    to do, and the walk over the schema is saved."""
    return any(
        isinstance(v, float) or (isinstance(v, int) and not -(2**31) <= v < 2**31)
        for _, _, v in scalars(document)
    )


def convert_numbers(typed: Typed, node: Node, value: Any) -> str | None:
    """Integer fields as kube's unstructured converter fills them, in place: a whole float
    becomes the integer (``replicas: 3.0``), an int32 field wraps as Go's conversion does;
    a fraction is its refusal (``cannot convert float64 to int32``), returned."""
    stack: list[tuple[Node, Any]] = [(node, value)]
    while stack:
        item_node, item = stack.pop()
        shape = typed.shape(item_node, item)
        if shape.kind == LEAF:  # an atomic struct or list is converted all the same
            shape = _contents(shape, item)
        if isinstance(item, dict) and shape.kind != LEAF:
            for name, child in item.items():
                child_node, _ = typed.field(shape, name)
                if isinstance(child, float | int) and child_node.get("type") == "integer":
                    converted = _integer(child, child_node)
                    if isinstance(converted, str):
                        return converted
                    item[name] = converted
                elif isinstance(child, dict | list):
                    stack.append((child_node, child))
        elif isinstance(item, list) and shape.kind != LEAF:
            items = typed.items(shape)
            stack.extend((items, child) for child in item if isinstance(child, dict | list))
    return None


def _integer(value: int | float, node: Node) -> int | str:
    go_type = "int32" if node.get("format") == "int32" else "int64"
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            return f"cannot convert float64 to {go_type}"
        value = int(value)
    if go_type == "int32":
        value = (value + 2**31) % 2**32 - 2**31  # Go's int64 -> int32 conversion
    return value


def smd_element(element: str) -> str:
    """A list item's path element as structured-merge-diff prints it: ``[name="web"]``,
    ``[=value]`` for a set, ``[0]`` by position."""
    kind, _, rest = element.partition(":")
    if kind == "i":
        return f"[{rest}]"
    if kind == "v":
        return f"[={rest}]"
    keys = orjson.loads(rest)
    return "[" + ",".join(f"{k}={orjson.dumps(v).decode()}" for k, v in keys.items()) + "]"
