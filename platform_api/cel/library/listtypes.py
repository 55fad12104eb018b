"""Lists of ``x-kubernetes-list-type: set`` and ``map`` as kube's CEL values treat them.

kube evaluates custom-resource rules on values that carry their schema
(``UnstructuredToVal``): a set-list equals any list holding the same elements in any order,
a map-list any list with the same entries by key, and ``+`` unites a set-list (new elements
appended) and merges a map-list (an entry of the right side replaces the left's entry of
the same key, in its place).  An object's equality compares each property by its own
schema, so ``self == oldSelf`` ignores the order of such lists anywhere inside.  The value
on the left decides: ``['b', 'a'] == self.tags`` is a plain list's ordered comparison.

Here values are plain lists and dicts.  ``rewriter`` finds, in a checked AST, the ``==``,
``!=``, ``+`` and ``in`` whose left operand is a schema-typed value (a path from ``self``
or ``oldSelf`` through fields, optional fields, indexes, ``dyn``, optionals, ternaries,
comprehension variables, list literals and the lists macros build) whose type holds such
lists, and calls the functions below instead, naming the operand's type by a key of
``register``.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from platform_api.cel.library.common import cel_equal
from platform_api.cel.library.decl import Function, glob

SET, MAP = "set", "map"
EQUALS, ADD, IN = "@schemaEquals", "@schema_add", "@schema_in"  # add's, in's one overload

# Each key names a schema type for the programs compiled against it; entries go with the
# types (a custom resource's compiled rules hold them).
_TYPES: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
_KEYS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_COUNTER = itertools.count()
_SEMANTIC: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
# Plain lists built of schema-typed elements (``[self.tags]``, ``items.map(i, i.sub)``),
# one per element type, alive as long as it is.
_LISTS_OF: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _list_of(elem: Any) -> Any:
    """A plain (atomic) list type of ``elem``: ordered itself, its elements compare by
    their own types."""
    if elem is None:
        return None
    found = _LISTS_OF.get(elem)
    if found is None:
        found = _LISTS_OF[elem] = type(elem)("list", elem=elem)
    return found


def register(decl: Any) -> str:
    """The key the runtime functions find ``decl`` (a DeclType) by."""
    key = _KEYS.get(decl)
    if key is None:
        key = _KEYS[decl] = f"t{next(_COUNTER)}"
        _TYPES[key] = decl
    return key


def has_list_semantics(decl: Any) -> bool:
    """Whether a value of ``decl`` holds a set- or map-list (where equality differs)."""
    if decl is None:
        return False
    found = _SEMANTIC.get(decl)
    if found is None:
        if decl.kind == "list" and decl.list_type in (SET, MAP):
            found = True
        elif decl.kind == "object":
            found = any(has_list_semantics(t) for _, t in decl.fields.values())
        else:
            found = decl.kind in ("list", "map") and has_list_semantics(decl.elem)
        _SEMANTIC[decl] = found
    return found


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return (type(value) is bool, value)  # true is no 1 in a Go map


def _entry_key(decl: Any, entry: Any) -> Any:
    if not isinstance(entry, dict):
        return _hashable(entry)
    return tuple(_hashable(entry.get(k)) for k in decl.map_keys)


def equal(decl: Any, a: Any, b: Any) -> bool:
    """``a == b`` with ``a`` a value of ``decl`` (kube's unstructured values' Equal)."""
    if decl is None or not has_list_semantics(decl):
        return cel_equal(a, b)
    if decl.kind == "list" and isinstance(a, list) and isinstance(b, list):
        return _list_equal(decl, a, b)
    if decl.kind in ("object", "map") and isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b:
                return False
            field_type = _field_type(decl, key) if decl.kind == "object" else decl.elem
            if not equal(field_type, value, b[key]):
                return False
        return True
    return cel_equal(a, b)


def _field_type(decl: Any, name: str) -> Any:
    """The type of an object's property by its name (DeclType keys them escaped)."""
    names = _NAMES.get(decl)
    if names is None:
        names = _NAMES[decl] = dict(decl.fields.values())
    return names.get(name)


def _list_equal(decl: Any, a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    if decl.list_type == SET:
        members = {_hashable(x) for x in a}
        return all(_hashable(y) in members for y in b)
    if decl.list_type == MAP:
        entries = {_entry_key(decl, x): x for x in a}
        for y in b:
            key = _entry_key(decl, y)
            if key not in entries or not equal(decl.elem, entries[key], y):
                return False
        return True
    return all(equal(decl.elem, x, y) for x, y in zip(a, b, strict=True))


def add(decl: Any, a: list[Any], b: list[Any]) -> list[Any]:
    """``a + b`` with ``a`` a set- or map-list of ``decl``."""
    out = list(a)
    if decl.list_type == SET:
        seen = {_hashable(x) for x in a}
        for y in b:
            if _hashable(y) not in seen:
                seen.add(_hashable(y))
                out.append(y)
        return out
    places = {_entry_key(decl, x): i for i, x in enumerate(a)}
    for y in b:
        place = places.get(_entry_key(decl, y))
        if place is None:
            out.append(y)
        else:
            out[place] = y
    return out


def _equals(a: Any, b: Any, key: str) -> bool:
    return equal(_TYPES[key], a, b)


def _in(a: Any, items: list[Any], key: str) -> bool:
    decl = _TYPES[key]
    return any(equal(decl, a, item) for item in items)


def _add(a: list[Any], b: list[Any], key: str) -> list[Any]:
    return add(_TYPES[key], a, b)


FUNCTIONS = [
    Function(
        EQUALS,
        [
            glob("@schema_equals_list", ("list(dyn)", "list(dyn)", "string"), "bool", _equals),
            glob(
                "@schema_equals_map",
                ("map(string, dyn)", "map(string, dyn)", "string"),
                "bool",
                _equals,
            ),
        ],
    ),
    Function("@schemaAdd", [glob(ADD, ("list(dyn)", "list(dyn)", "string"), "list(dyn)", _add)]),
    Function("@schemaIn", [glob(IN, ("dyn", "list(dyn)", "string"), "bool", _in)]),
]


# -- the rewrite ------------------------------------------------------------------------


def _comprehension_var(name: str, parents: tuple[Any, ...], roots: Mapping[str, Any]) -> Any:
    """The type of a comprehension's variable ``name``: a list's element, a bound value."""
    for depth in range(len(parents) - 1, -1, -1):
        node = parents[depth]
        if node.WhichOneof("expr_kind") != "comprehension_expr":
            continue
        c, above = node.comprehension_expr, parents[:depth]
        if c.iter_var == name:
            listed = type_of(c.iter_range, above, roots)
            return listed.elem if listed is not None and listed.kind == "list" else None
        if c.accu_var == name:  # cel.bind: no range, the accumulator is the bound value
            empty = c.iter_range.WhichOneof("expr_kind") == "list_expr"
            if empty and not c.iter_range.list_expr.elements:
                return type_of(c.accu_init, above, roots)
            return None
    return roots.get(name)


def type_of(expr: Any, parents: tuple[Any, ...], roots: Mapping[str, Any]) -> Any:
    """The schema type of ``expr``'s value when it is one (a DeclType), else None."""
    kind = expr.WhichOneof("expr_kind")
    here = (*parents, expr)
    if kind == "ident_expr":
        return _comprehension_var(expr.ident_expr.name, parents, roots)
    if kind == "list_expr":
        typed = (type_of(e, here, roots) for e in expr.list_expr.elements)
        return _list_of(next((t for t in typed if t is not None), None))
    if kind == "comprehension_expr":
        return _built(expr.comprehension_expr, here, roots)
    if kind == "select_expr":
        if expr.select_expr.test_only:
            return None
        owner = type_of(expr.select_expr.operand, here, roots)
        if owner is None:
            return None
        if owner.kind == "map":
            return owner.elem
        if owner.kind != "object":
            return None
        field = expr.select_expr.field  # the property's name once unescaped, else escaped
        return _field_type(owner, field) or owner.field_type(field)
    if kind != "call_expr":
        return None
    call = expr.call_expr
    if call.function == "_?._" and len(call.args) == 2:  # self.?field
        owner = type_of(call.args[0], here, roots)
        field = call.args[1].const_expr.string_value
        return _field_type(owner, field) if owner is not None and owner.kind == "object" else None
    if call.function in ("_[_]", "_[?_]") and len(call.args) == 2:
        owner = type_of(call.args[0], here, roots)
        return owner.elem if owner is not None and owner.kind in ("list", "map") else None
    if call.function == ADD:
        return _TYPES.get(call.args[2].const_expr.string_value)
    if call.function == "_?_:_" and len(call.args) == 3:
        return type_of(call.args[1], here, roots) or type_of(call.args[2], here, roots)
    if call.function in ("optional.of", "dyn") and len(call.args) == 1:
        return type_of(call.args[0], here, roots)
    if call.function in ("value", "orValue") and call.HasField("target"):
        return type_of(call.target, here, roots)
    return None


def _built(c: Any, here: tuple[Any, ...], roots: Mapping[str, Any]) -> Any:
    """The type of a list a macro builds (``map``: ``accu + [f(x)]``; ``filter`` keeps
    the elements): a plain list of the elements' types."""
    step = c.loop_step
    if step.WhichOneof("expr_kind") == "call_expr" and step.call_expr.function == "_?_:_":
        step = step.call_expr.args[1]  # filter, map with a predicate: the taken branch
    if step.WhichOneof("expr_kind") != "call_expr" or step.call_expr.function != "_+_":
        return None
    added = step.call_expr.args[1]
    if added.WhichOneof("expr_kind") != "list_expr" or len(added.list_expr.elements) != 1:
        return None
    return _list_of(type_of(added.list_expr.elements[0], (*here, step, added), roots))


def rewriter(roots: Mapping[str, Any]) -> Callable[[Any, Any, tuple[Any, ...]], Any | None]:
    """A checked-AST rewriter for rules whose variables ``roots`` (name -> DeclType) are
    schema-typed: their set- and map-lists compare and join as kube's."""

    def rewrite(checked: Any, expr: Any, parents: tuple[Any, ...]) -> Any | None:
        if expr.WhichOneof("expr_kind") != "call_expr" or expr.call_expr.HasField("target"):
            return None
        function, args = expr.call_expr.function, expr.call_expr.args
        if function not in ("_==_", "_!=_", "_+_", "@in") or len(args) != 2:
            return None
        left = type_of(args[0], (*parents, expr), roots)
        if left is None or not has_list_semantics(left):
            return None
        if function == "_+_" and not (left.kind == "list" and left.list_type in (SET, MAP)):
            return None
        key = checked.string(register(left))
        if function == "@in":
            return checked.call(IN, args[0], args[1], key)
        if function == "_+_":
            return checked.call(ADD, args[0], args[1], key)
        equals = checked.call(EQUALS, args[0], args[1], key)
        return equals if function == "_==_" else checked.call("!_", equals)

    return rewrite
