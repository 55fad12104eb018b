"""kube's internal Go structs, printed as its validation messages print them.

Some of kube's messages embed an internal (untagged) struct: ``json.Marshal`` of it names
the Go fields (``{"Required":{"NodeSelectorTerms":...}}``), every field present, zero
values included; the immutability errors of claims and volumes embed a unified diff of
two such structs written by ``json.MarshalIndent(v, "", " ")`` (apimachinery's
``diff.Diff``).  A ``Layout`` says how a v1 JSON object maps onto the Go struct.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from platform_api.gotext import Struct, json_string, marshal


@dataclass(frozen=True)
class Many:
    """A slice of structs (``[]NodeSelectorTerm``); null when absent."""

    layout: Layout


@dataclass(frozen=True)
class Held:
    """A struct held by value: printed whole, zero fields and all, even when absent."""

    layout: Layout


@dataclass(frozen=True)
class Tagged:
    """A struct with JSON tags (a ``metav1.LabelSelector``): its v1 names, empty fields
    left out (``omitempty``)."""

    layout: Layout


# A field: (Go name, v1 JSON key, kind).  The kind is the zero value a scalar prints when
# absent ("" / False / 0), None for a pointer, slice or map printed as held, a nested
# Layout for a pointer to a struct, or Many / Held / Tagged.
Field = tuple[str, str, Any]
Layout = tuple[Field, ...]


def go_struct(value: Any, layout: Layout) -> Struct:
    """``value`` (a v1 JSON object) as the Go struct of ``layout`` marshals."""
    source = value if isinstance(value, dict) else {}
    out = Struct()
    for go_name, key, kind in layout:
        out[go_name] = _field(source.get(key), kind)
    return out


def _field(held: Any, kind: Any) -> Any:
    if isinstance(kind, tuple):
        return None if held is None else go_struct(held, kind)
    if isinstance(kind, Many):
        return None if held is None else [go_struct(item, kind.layout) for item in held]
    if isinstance(kind, Held):
        return go_struct(held, kind.layout)
    if isinstance(kind, Tagged):
        return None if held is None else _tagged(held, kind.layout)
    if held is None:
        return kind  # the zero value ("", False, 0) or null
    return held


def _tagged(value: Any, layout: Layout) -> Struct:
    source = value if isinstance(value, dict) else {}
    out = Struct()
    for _, key, kind in layout:
        held = _field(source.get(key), kind)
        if held not in (None, "", [], {}, False, 0):
            out[key] = held
    return out


def _semantic(value: Any) -> Any:
    """apimachinery's Semantic equality reads an empty slice or map as nil."""
    if isinstance(value, Struct):
        return [(k, _semantic(v)) for k, v in value.items()]
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items()} or None
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


def same(a: Any, b: Any) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two rendered structs."""
    return bool(_semantic(a) == _semantic(b))


def marshal_indent(value: Any, depth: int = 0) -> str:
    """``json.MarshalIndent(value, "", " ")``: Struct fields in order, map keys sorted."""
    if isinstance(value, dict) and value:
        items = value.items() if isinstance(value, Struct) else sorted(value.items())
        parts = [f"{json_string(k)}: {marshal_indent(v, depth + 1)}" for k, v in items]
    elif isinstance(value, list) and value:
        parts = [marshal_indent(v, depth + 1) for v in value]
    else:
        return marshal(value)
    inner = "\n" + " " * (depth + 1)
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * depth + closing


def struct_diff(old: Any, new: Any) -> str:
    """apimachinery's ``diff.Diff``: a unified diff (3 lines of context, no file header)
    of the two values written out, each line ending in a newline."""
    before = marshal_indent(old).split("\n")
    after = marshal_indent(new).split("\n")
    lines = list(difflib.unified_diff(before, after, lineterm="", n=3))[2:]
    return "".join(line + "\n" for line in lines)
