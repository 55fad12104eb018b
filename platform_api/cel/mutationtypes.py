"""The types kube's checker gives a mutation expression, read off the rewritten one.

``platform_api.cel.mutation`` compiles each ``Object{...}`` / ``JSONPatch{...}`` literal
as a map literal that carries its type name, so cel-cpp types all of them
``map(string, dyn)``.  kube's checker knows them by name, and it takes a mutation only
when the expression's type is exactly ``Object`` or ``list(JSONPatch)``: ``[]`` alone is
``list(dyn)``, ``dyn(...)`` and ``object`` are ``dyn``, an ``Object.spec`` literal is
``Object.spec``.  ``kube_type`` names an expression's type as kube does, from the
literals' names and cel-cpp's types, unifying as the checker does where a type is open
(an empty list's element, a comprehension's accumulator).  ``field_problems`` are the
type errors kube's checker reports in JSONPatch literals' fields.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.checked import Checked, type_text, walk

OPEN = "?"  # a type not yet known (an empty list's element): unifies with any
_ACCUMULATOR = "@result"
_JSON_PATCH_FIELDS = {"op": "string", "path": "string", "from": "string", "value": ""}


def literal_name(expr: Any, type_key: str) -> str | None:
    """The type name a rewritten literal carries (its first entry), or None."""
    if expr.WhichOneof("expr_kind") != "struct_expr":
        return None
    entries = expr.struct_expr.entries
    if not entries or not entries[0].HasField("map_key"):
        return None
    key, value = entries[0].map_key, entries[0].value
    if key.WhichOneof("expr_kind") != "const_expr" or key.const_expr.string_value != type_key:
        return None
    args: Any = value.call_expr.args if value.WhichOneof("expr_kind") == "call_expr" else ()
    if len(args) != 1 or args[0].WhichOneof("expr_kind") != "const_expr":
        return None
    return str(args[0].const_expr.string_value)


def kube_type(checked: Checked, type_key: str) -> str:
    """The expression's type as kube's checker names it."""
    return _closed(_type(checked, checked.ast.expr, type_key))


def _closed(text: str) -> str:
    return text.replace(OPEN, "dyn")


def _type(checked: Checked, expr: Any, type_key: str) -> str:
    name = literal_name(expr, type_key)
    if name is not None:
        return name
    kind = expr.WhichOneof("expr_kind")
    if kind == "list_expr":
        joined: str | None = OPEN
        for element in expr.list_expr.elements:
            joined = _join(joined, _type(checked, element, type_key)) if joined else None
        return f"list({joined})" if joined is not None else _cpp(checked, expr)
    if kind == "ident_expr" and expr.ident_expr.name == _ACCUMULATOR:
        return OPEN
    if kind == "comprehension_expr":
        return _comprehension(checked, expr, type_key)
    if kind == "call_expr":
        call = expr.call_expr
        joined_args: Any = None
        if call.function == "_?_:_" and len(call.args) == 3:
            joined_args = call.args[1:]
        elif call.function == "_+_" and len(call.args) == 2:
            joined_args = call.args
        if joined_args is not None:
            a, b = (_type(checked, arg, type_key) for arg in joined_args)
            both = _join(a, b)
            return both if both is not None else _cpp(checked, expr)
    return _cpp(checked, expr)


def _comprehension(checked: Checked, expr: Any, type_key: str) -> str:
    """A macro's result: the accumulator's type as its steps build it (``map`` appends
    its transform to a list that starts empty)."""
    c = expr.comprehension_expr
    if c.accu_var != _ACCUMULATOR or c.result.WhichOneof("expr_kind") != "ident_expr":
        return _cpp(checked, expr)
    start = _type(checked, c.accu_init, type_key)
    step = _type(checked, c.loop_step, type_key)
    joined = _join(start, step)
    return joined if joined is not None else _cpp(checked, expr)


def _cpp(checked: Checked, expr: Any) -> str:
    return type_text(checked.type_of(expr.id))


def _join(a: str, b: str) -> str | None:
    """The type both sides are (an open one takes the other's), ``dyn`` if either is;
    None where they do not unify."""
    if b in (a, OPEN):
        return a
    if a == OPEN:
        return b
    if "dyn" in (a, b):
        return "dyn"
    if a.startswith("list(") and b.startswith("list("):
        inner = _join(a[5:-1], b[5:-1])
        return f"list({inner})" if inner is not None else None
    return None


def field_problems(checked: Checked, type_key: str) -> list[tuple[int, str]]:
    """(the field's entry id, kube's message) for each JSONPatch literal field of the
    wrong type: op, path and from are strings, value anything; kube's JSONPatch has no
    other field, and a field it lacks has the empty type."""
    out = []
    for expr, _ in walk(checked.ast.expr):
        if literal_name(expr, type_key) != "JSONPatch":
            continue
        for entry in list(expr.struct_expr.entries)[1:]:
            key = entry.map_key.const_expr.string_value
            wanted = _JSON_PATCH_FIELDS.get(key)
            if key == "value" or entry.optional_entry:
                continue
            value = entry.value  # dyn(<the field's expression>)
            inner = value.call_expr.args[0] if value.call_expr.args else value
            provided = type_text(checked.type_of(inner.id))
            if wanted is not None and provided in (wanted, "dyn"):
                continue
            message = (
                f"expected type of field '{key}' is '{wanted or ''}' but provided type is "
                f"'{provided}'"
            )
            out.append((entry.id, message))
    return out
