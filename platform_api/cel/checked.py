"""Reading and rewriting checked ASTs (``cel.expr.CheckedExpr`` messages).

The server type-checks with kube's declarations, then evaluates a rewritten copy of the checked
AST in a separate runtime environment: calls to Python-implemented functions are renamed to
their overload id (so the runtime binding is exact, uint results stay uint), calls returning
optionals are expanded (Python cannot build optionals), and callers may rename message fields.
This module also runs kube's AST validators (regex, duration and timestamp literals, homogeneous
aggregate literals) over the checked AST.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from platform_api.cel.protos import AstType, Expr

_KINDS = ("dyn", "null", "primitive", "wrapper", "well_known", "list_type", "map_type")
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def children(expr: Any) -> Iterator[Any]:
    kind = expr.WhichOneof("expr_kind")
    if kind == "select_expr":
        yield expr.select_expr.operand
    elif kind == "call_expr":
        if expr.call_expr.HasField("target"):
            yield expr.call_expr.target
        yield from expr.call_expr.args
    elif kind == "list_expr":
        yield from expr.list_expr.elements
    elif kind == "struct_expr":
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield entry.map_key
            yield entry.value
    elif kind == "comprehension_expr":
        c = expr.comprehension_expr
        yield from (c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result)


def walk(expr: Any, parents: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every node with its ancestors, parents first."""
    yield expr, parents
    for child in children(expr):
        yield from walk(child, (*parents, expr))


def type_text(t: Any) -> str:
    """cel-go's FormatCELType of a checked type."""
    kind = t.WhichOneof("type_kind")
    if kind == "primitive":
        return _PRIMITIVES.get(t.primitive, "dyn")
    if kind == "wrapper":
        return f"wrapper({_PRIMITIVES.get(t.wrapper, 'dyn')})"
    if kind == "well_known":
        return _WELL_KNOWN.get(t.well_known, "dyn")
    if kind == "list_type":
        return f"list({type_text(t.list_type.elem_type)})"
    if kind == "map_type":
        return f"map({type_text(t.map_type.key_type)}, {type_text(t.map_type.value_type)})"
    if kind == "message_type":
        return str(t.message_type)
    if kind == "type_param":
        return str(t.type_param)
    if kind == "type":
        return f"type({type_text(t.type)})"
    if kind == "null":
        return "null_type"
    if kind == "abstract_type":
        params = ", ".join(type_text(p) for p in t.abstract_type.parameter_types)
        return f"{t.abstract_type.name}({params})" if params else str(t.abstract_type.name)
    if kind == "error":
        return "*error*"
    return "dyn"


def equivalent(a: Any, b: Any) -> bool:
    return bool(a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True))


class Checked:
    """A checked AST with its source, and helpers over its maps."""

    def __init__(self, source: str, checked: Any) -> None:
        self.source = source
        self.ast = checked
        self._next_id = max((e.id for e, _ in walk(checked.expr)), default=0) + 1

    def copy(self) -> Checked:
        ast = type(self.ast)()
        ast.CopyFrom(self.ast)
        return Checked(self.source, ast)

    def uses(self, name: str) -> bool:
        """Whether the expression references the variable ``name``."""
        return any(ref.name == name for ref in self.ast.reference_map.values())

    def overloads(self, expr_id: int) -> list[str]:
        ref = self.ast.reference_map.get(expr_id)
        return list(ref.overload_id) if ref is not None else []

    def type_of(self, expr_id: int) -> Any:
        t = self.ast.type_map.get(expr_id)
        return t if t is not None else AstType(dyn=b"")

    def offset(self, expr_id: int) -> int:
        return int(self.ast.source_info.positions.get(expr_id, 0))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def call(self, function: str, *args: Any, target: Any = None) -> Any:
        node = Expr(id=self.new_id())
        node.call_expr.function = function
        if target is not None:
            node.call_expr.target.CopyFrom(target)
        for arg in args:
            node.call_expr.args.add().CopyFrom(arg)
        return node

    def ident(self, name: str) -> Any:
        node = Expr(id=self.new_id())
        node.ident_expr.name = name
        return node

    def string(self, value: str) -> Any:
        node = Expr(id=self.new_id())
        node.const_expr.string_value = value
        return node

    def clone(self, expr: Any) -> Any:
        """A copy with fresh ids (a subtree used twice)."""
        copy = Expr()
        copy.CopyFrom(expr)
        for node, _ in walk(copy):
            node.id = self.new_id()
        return copy


Rewriter = Callable[[Checked, Any, tuple[Any, ...]], Any | None]


def rewrite(checked: Checked, rewriters: list[Rewriter]) -> None:
    """Apply each rewriter to every node, bottom-up; a rewriter returns a replacement or None."""

    def visit(expr: Any, parents: tuple[Any, ...]) -> None:
        for child in list(children(expr)):
            visit(child, (*parents, expr))
        for rewriter in rewriters:
            replacement = rewriter(checked, expr, parents)
            if replacement is not None:
                expr.CopyFrom(replacement)

    visit(checked.ast.expr, ())
