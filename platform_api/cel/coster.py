"""The walk of cel-go's ``checker.Cost`` over a checked AST (see ``cost`` for the entry point).

The coster walks the checked AST exactly as cel-go's does (paths such as
``self.spec.items.@items`` name the values a node reads, so a ``SizeEstimator`` can bound their
sizes from the schema), and asks ``costlib`` for the cost of library calls.  kube builds every
environment with ``PresenceTestHasCost(false)``: ``has()`` is free.

cel-cpp has no runtime cost tracker.  ``estimate`` with a size estimator fed the sizes of the
actual values gives an upper bound of kube's runtime cost (loops counted as running to the end).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from platform_api.cel.checked import Checked

U64 = (1 << 64) - 1
SELECT_COST, CONST_COST = 1, 0
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
STRING_TRAVERSAL, REGEX_LENGTH = 0.1, 0.25
PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000
STATIC_RULE_LIMIT = 10_000_000
STATIC_CRD_LIMIT = 100_000_000


def _add(a: int, b: int) -> int:
    return U64 if b > 0 and a > U64 - b else a + b


def _mul(a: int, b: int) -> int:
    return U64 if b != 0 and a > U64 // b else a * b


def _factor(x: int, f: float) -> int:
    xf = float(x)
    if xf > 0 and f > 0 and xf > U64 / f:
        return U64
    ceil = -(-xf * f // 1)
    return U64 if ceil >= 2.0**64 else int(ceil)


@dataclass(frozen=True)
class Estimate:
    """A [min, max] range: cel-go's SizeEstimate and CostEstimate alike."""

    lo: int
    hi: int

    def add(self, o: Estimate) -> Estimate:
        return Estimate(_add(self.lo, o.lo), _add(self.hi, o.hi))

    def mul(self, o: Estimate) -> Estimate:
        return Estimate(_mul(self.lo, o.lo), _mul(self.hi, o.hi))

    def factor(self, f: float) -> Estimate:
        return Estimate(_factor(self.lo, f), _factor(self.hi, f))

    def union(self, o: Estimate) -> Estimate:
        return Estimate(min(self.lo, o.lo), max(self.hi, o.hi))


def fixed(n: int) -> Estimate:
    return Estimate(n, n)


UNKNOWN = Estimate(0, U64)
ZERO = fixed(0)


def type_kind(t: Any) -> str:
    """The kind of a checked type, named as cel-go's types.Kind."""
    kind = t.WhichOneof("type_kind")
    if kind == "primitive":
        return {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}.get(
            t.primitive, "dyn"
        )
    if kind == "well_known":
        return {2: "timestamp", 3: "duration"}.get(t.well_known, "dyn")
    if kind == "list_type":
        return "list"
    if kind == "map_type":
        return "map"
    if kind == "message_type":
        return "struct"
    if kind == "type_param":
        return "typeparam"
    if kind == "abstract_type":
        return "optional" if t.abstract_type.name == "optional_type" else "opaque"
    return kind or "dyn"


def elem_type(t: Any) -> Any | None:
    kind = t.WhichOneof("type_kind")
    if kind == "list_type":
        return t.list_type.elem_type
    if kind == "map_type":
        return t.map_type.key_type
    if kind == "abstract_type" and t.abstract_type.parameter_types:
        return t.abstract_type.parameter_types[0]
    return None


@dataclass
class Node:
    """cel-go's AstNode: what an estimator may know about an argument."""

    path: list[str] | None
    type: Any
    expr: Any
    computed: Estimate | None = None


class SizeEstimator(Protocol):
    def size(self, node: Node) -> Estimate | None: ...


SizeOf = Callable[[Node], Estimate]
CallEstimator = Callable[[str, str, Node | None, list[Node], SizeOf], Any]
BuiltinCost = Callable[..., Any]


@dataclass
class _Local:
    path: list[str]
    size: Estimate | None
    entry: tuple[str, Estimate, Estimate] | None


class Coster:
    """One estimation over one checked AST (cel-go's ``coster``)."""

    def __init__(
        self, checked: Checked, sizes: SizeEstimator, calls: CallEstimator, builtin: BuiltinCost
    ) -> None:
        self.checked = checked
        self.sizes = sizes
        self.calls = calls
        self.builtin = builtin
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.computed: dict[int, Estimate] = {}
        self.entries: dict[int, tuple[str, Estimate, Estimate]] = {}

    # -- helpers ------------------------------------------------------------------------
    def kind(self, expr: Any) -> str:
        return type_kind(self.checked.type_of(expr.id))

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def path(self, expr: Any) -> list[str]:
        if expr.WhichOneof("expr_kind") == "ident_expr":
            var = self.local(expr.ident_expr.name)
            if var is not None:
                return list(var.path)
        return list(self.paths.get(expr.id, []))

    def node(self, expr: Any) -> Node:
        path: list[str] | None = self.path(expr)
        if path and path[0] in ("__result__", "@result"):
            path = None
        return Node(path, self.checked.type_of(expr.id), expr, self.compute_size(expr))

    def size_of(self, node: Node) -> Estimate:
        if node.computed is not None:
            return node.computed
        return self.sizes.size(node) or UNKNOWN

    def expr_size(self, expr: Any) -> Estimate:
        return self.compute_size(expr) or UNKNOWN

    def compute_size(self, expr: Any) -> Estimate | None:
        if expr.id in self.computed:
            return self.computed[expr.id]
        literal = _literal_size(expr)
        if literal is not None:
            return literal
        node = Node(self.path(expr), self.checked.type_of(expr.id), expr)
        estimated = self.sizes.size(node)
        if estimated is not None:
            self.computed[expr.id] = estimated
            return estimated
        if _is_scalar(self.checked.type_of(expr.id)):
            return fixed(1)
        if expr.WhichOneof("expr_kind") == "ident_expr":
            var = self.local(expr.ident_expr.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def entry_size(self, expr: Any) -> tuple[str, Estimate, Estimate] | None:
        if expr.id in self.entries:
            return self.entries[expr.id]
        if expr.WhichOneof("expr_kind") == "ident_expr":
            var = self.local(expr.ident_expr.name)
            if var is not None:
                return var.entry
        return None

    def push(self, name: str, path: list[str], size: Estimate | None, entry: Any = None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    # -- the walk -------------------------------------------------------------------------
    def cost(self, expr: Any) -> Estimate:
        kind = expr.WhichOneof("expr_kind")
        if kind == "const_expr":
            return fixed(CONST_COST)
        if kind == "ident_expr":
            var = self.local(expr.ident_expr.name)
            self.paths[expr.id] = list(var.path) if var else [expr.ident_expr.name]
            return fixed(SELECT_COST)
        if kind == "select_expr":
            return self.cost_select(expr)
        if kind == "call_expr":
            return self.cost_call(expr)
        if kind == "list_expr":
            return self.cost_list(expr)
        if kind == "struct_expr":
            return self.cost_struct(expr)
        if kind == "comprehension_expr":
            return self.cost_comprehension(expr)
        return ZERO

    def cost_select(self, expr: Any) -> Estimate:
        sel = expr.select_expr
        total = self.cost(sel.operand)
        if sel.test_only:
            return total  # presence tests are free in kube's environments
        if self.kind(sel.operand) in ("map", "struct", "typeparam"):
            total = total.add(fixed(SELECT_COST))
        self.paths[expr.id] = [*self.path(sel.operand), sel.field]
        return total

    def cost_call(self, expr: Any) -> Estimate:
        call = expr.call_expr
        if call.function == "dyn" and len(call.args) == 1:
            arg_cost = self.cost(call.args[0])
            self._copy_sizes(expr, call.args[0])
            return fixed(1).add(arg_cost)
        arg_costs = [self.cost(a) for a in call.args]
        args = [self.node(a) for a in call.args]
        ids = self.checked.overloads(expr.id)
        if not ids:
            return ZERO
        total = ZERO
        target = None
        if call.HasField("target"):
            total = total.add(self.cost(call.target))
            target = self.node(call.target)
        fn_cost = Estimate(U64, 0)
        result: Estimate | None = None
        for overload in ids:
            cost, size = self.function_cost(expr, call.function, overload, target, args, arg_costs)
            fn_cost = fn_cost.union(cost)
            if size is not None:
                result = size if result is None else result.union(size)
            if overload in ("index_list", "index_map") and call.args:
                entry = self.entry_size(call.args[0])
                result = entry[2] if entry else None
                step = "@items" if overload == "index_list" else "@values"
                self.paths[expr.id] = [*self.path(call.args[0]), step]
            if result is None:
                result = self.compute_size(expr)
        if result is not None:
            self.computed[expr.id] = result
        return total.add(fn_cost)

    def _copy_sizes(self, dst: Any, src: Any) -> None:
        size = self.compute_size(src)
        if size is not None:
            self.computed[dst.id] = size
        entry = self.entry_size(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def cost_list(self, expr: Any) -> Estimate:
        total = ZERO
        elements = expr.list_expr.elements
        item = Estimate(0 if not elements else U64, 0)
        for element in elements:
            total = total.add(self.cost(element))
            item = item.union(self.expr_size(element))
        self.entries[expr.id] = ("list", fixed(1), item)
        return total.add(fixed(LIST_CREATE))

    def cost_struct(self, expr: Any) -> Estimate:
        struct = expr.struct_expr
        total = ZERO
        if struct.message_name:
            for entry in struct.entries:
                total = total.add(self.cost(entry.value))
            return total.add(fixed(STRUCT_CREATE))
        empty = not struct.entries
        key = Estimate(0 if empty else U64, 0)
        value = Estimate(0 if empty else U64, 0)
        for entry in struct.entries:
            total = total.add(self.cost(entry.map_key)).add(self.cost(entry.value))
            key = key.union(self.expr_size(entry.map_key))
            value = value.union(self.expr_size(entry.value))
        self.entries[expr.id] = ("map", key, value)
        return total.add(fixed(MAP_CREATE))

    def cost_comprehension(self, expr: Any) -> Estimate:
        comp = expr.comprehension_expr
        if _is_bind(comp):
            total = self.cost(comp.iter_range).add(self.cost(comp.accu_init))
            self.push(
                comp.accu_var,
                self.path(comp.accu_init),
                self.compute_size(comp.accu_init),
                self.entry_size(comp.accu_init),
            )
            total = total.add(self.cost(comp.result))
            self.pop(comp.accu_var)
            self._copy_sizes(expr, comp.result)
            return total
        total = self.cost(comp.iter_range).add(self.cost(comp.accu_init))
        self.push(
            comp.accu_var,
            self.path(comp.accu_init),
            self.compute_size(comp.accu_init),
            self.entry_size(comp.accu_init),
        )
        rng = comp.iter_range
        entry = self.entry_size(rng)
        container = entry[0] if entry else self.kind(rng)
        base = self.path(rng)
        if comp.iter_var2:
            key_step = "@indices" if container == "list" else "@keys"
            val_step = "@items" if container == "list" else "@values"
            self.push(comp.iter_var, [*base, key_step], entry[1] if entry else None)
            self.push(comp.iter_var2, [*base, val_step], entry[2] if entry else None)
        elif container == "list":
            self.push(comp.iter_var, [*base, "@items"], entry[2] if entry else None)
        else:
            self.push(comp.iter_var, [*base, "@keys"], entry[1] if entry else None)
        loop = self.cost(comp.loop_condition)
        step = self.cost(comp.loop_step)
        self.pop(comp.iter_var)
        if comp.iter_var2:
            self.pop(comp.iter_var2)
        total = total.add(self.cost(comp.result))
        self.pop(comp.accu_var)
        count = self.expr_size(rng)
        total = total.add(count.mul(step.add(loop)))
        init_kind = comp.accu_init.WhichOneof("expr_kind")
        if init_kind == "const_expr":
            size = self.compute_size(comp.accu_init)
            if size is not None:
                self.computed[expr.id] = size
        elif init_kind in ("list_expr", "struct_expr"):
            self.computed[expr.id] = count
            step_entry = self.entry_size(comp.loop_step)
            if step_entry is not None:
                self.entries[expr.id] = step_entry
        return total

    def function_cost(
        self,
        expr: Any,
        function: str,
        overload: str,
        target: Node | None,
        args: list[Node],
        arg_costs: list[Estimate],
    ) -> tuple[Estimate, Estimate | None]:
        arg_sum = ZERO
        for c in arg_costs:
            arg_sum = arg_sum.add(c)
        estimate = self.calls(function, overload, target, args, self.size_of)
        if estimate is not None:
            cost, size = estimate
            return cost.add(arg_sum), size
        result: tuple[Estimate, Estimate | None] = self.builtin(
            self, expr, overload, target, args, arg_costs, arg_sum
        )
        return result


def _is_bind(comp: Any) -> bool:
    rng, cond = comp.iter_range, comp.loop_condition
    return (
        rng.WhichOneof("expr_kind") == "list_expr"
        and not rng.list_expr.elements
        and cond.WhichOneof("expr_kind") == "const_expr"
        and cond.const_expr.WhichOneof("constant_kind") == "bool_value"
        and not cond.const_expr.bool_value
        and comp.accu_var not in ("__result__", "@result")
    )


def _literal_size(expr: Any) -> Estimate | None:
    kind = expr.WhichOneof("expr_kind")
    if kind == "const_expr":
        const = expr.const_expr.WhichOneof("constant_kind")
        if const == "string_value":
            return fixed(len(expr.const_expr.string_value))
        if const == "bytes_value":
            return fixed(len(expr.const_expr.bytes_value))
        return fixed(1) if const else None
    if kind == "list_expr":
        return fixed(len(expr.list_expr.elements))
    if kind == "struct_expr" and not expr.struct_expr.message_name:
        return fixed(len(expr.struct_expr.entries))
    return None


def _is_scalar(t: Any) -> bool:
    kind = type_kind(t)
    if kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    if kind == "optional":
        inner = elem_type(t)
        return inner is not None and _is_scalar(inner)
    return False
