"""Static cost estimation: cel-go's ``checker.Cost`` with kube's ``library.CostEstimator``.

``estimate(checked, sizes)`` walks the checked AST (``coster``); call costs come from cel-go's
extension estimators (sets, lists v3), then kube's ``EstimateCallCost``, then cel-go's own
costs of standard functions, in the order cel-go consults them.  kube builds every environment
with ``PresenceTestHasCost(false)``: ``has()`` is free.

cel-cpp has no runtime cost tracker.  ``estimate`` with a size estimator fed the sizes of the
actual values (``sizes.ActualSizes``) gives an upper bound of kube's runtime cost (loops counted
as running to the end); the CRD validator uses it where the static bound is large.
"""

from __future__ import annotations

import math
from typing import Any

from platform_api.cel.checked import Checked
from platform_api.cel.coster import (
    LIST_CREATE,
    PER_CALL_LIMIT,
    REGEX_LENGTH,
    RUNTIME_BUDGET,
    STATIC_CRD_LIMIT,
    STATIC_RULE_LIMIT,
    STRING_TRAVERSAL,
    U64,
    ZERO,
    Coster,
    Estimate,
    Node,
    SizeEstimator,
    SizeOf,
    elem_type,
    fixed,
    type_kind,
)

ONE = fixed(1)
_UNIT_FUNCTIONS = {
    "serviceAccount",
    "path",
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "allowed",
    "reason",
    "error",
    "errored",
    "masked",
    "prefixLength",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "format.named",
    "sign",
    "asInteger",
    "isInteger",
    "asApproximateFloat",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "add",
    "sub",
    "major",
    "minor",
    "patch",
    "getScheme",
    "getHostname",
    "getHost",
    "getPort",
    "getEscapedPath",
    "getQuery",
}
_UNIT_EQUALITY = {
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "net.IP",
    "net.CIDR",
    "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.Decision",
}
MAX_FORMAT_SIZE, MAX_NAME_FORMAT_REGEX = 64, 128
_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
CallCost = tuple[Estimate, Estimate | None]


def selector_cost(length: Estimate) -> Estimate:
    parse = length.factor(STRING_TRAVERSAL)
    requirements = length.factor(0.5).factor(LIST_CREATE + 40)
    return fixed(LIST_CREATE).add(parse).add(requirements)


def _list_element(node: Node) -> Node | None:
    elem = elem_type(node.type) if type_kind(node.type) == "list" else None
    if elem is None:
        return None
    return Node([*node.path, "@items"] if node.path is not None else None, elem, None)


def library_call_cost(
    function: str, overload: str, target: Node | None, args: list[Node], size: SizeOf
) -> CallCost | None:
    """Extension estimators, then kube's EstimateCallCost; None falls back to cel-go's own."""
    ext = _extension_cost(overload, target, args, size)
    if ext is not None:
        return ext
    if function == "check":
        return fixed(350000), None
    if function in _UNIT_FUNCTIONS:
        return ONE, None
    if function in ("fieldSelector", "labelSelector") and len(args) == 1:
        return selector_cost(size(args[0])), None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target:
        element = _list_element(target)
        if element is None:  # indexOf / lastIndexOf on a string
            return size(target).factor(STRING_TRAVERSAL), None
        el_cost = ONE
        if type_kind(element.type) in ("string", "bytes"):
            el_cost = el_cost.add(size(element).factor(STRING_TRAVERSAL))
        return size(target).mul(el_cost), None
    if function == "url" and len(args) == 1:
        sz = size(args[0])
        return sz.factor(STRING_TRAVERSAL), sz
    if function in ("lowerAscii", "upperAscii", "substring", "trim") and target:
        sz = size(target)
        return sz.factor(STRING_TRAVERSAL), sz
    if function == "replace" and target and len(args) >= 2:
        return _replace_cost(size(target), size(args[0]), size(args[1]))
    if function == "split" and target:
        sz = size(target)
        hi = sz.hi
        if len(args) > 1 and args[1].expr is not None:
            literal = _int_literal(args[1].expr)
            if literal is not None:
                hi = literal % (1 << 64)
        return sz.factor(2 * STRING_TRAVERSAL), Estimate(0, hi)
    if function == "join" and target:
        return _join_cost(target, args, size)
    if function in ("find", "findAll") and target and args:
        sz = size(target)
        str_cost = sz.add(ONE).factor(STRING_TRAVERSAL)
        return str_cost.mul(size(args[0]).factor(REGEX_LENGTH)), Estimate(0, sz.hi)
    return _kube_more(function, overload, args, size)


def _kube_more(function: str, overload: str, args: list[Node], size: SizeOf) -> CallCost | None:
    if (
        function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver")
        and args
    ):
        return size(args[0]).factor(STRING_TRAVERSAL), None
    if function == "ip":
        if overload == "cidr_ip":
            return ONE, None
        if args:
            return size(args[0]).factor(STRING_TRAVERSAL), None
    if function == "ip.isCanonical" and args:
        return size(args[0]).factor(2 * STRING_TRAVERSAL), None
    if function in ("containsIP", "containsCIDR") and args:
        addr = Estimate(4, 16)
        cost = addr.add(addr).factor(STRING_TRAVERSAL)
        if function == "containsCIDR":
            cost = cost.add(addr.factor(STRING_TRAVERSAL)).add(ONE)
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = cost.add(size(args[0]).factor(STRING_TRAVERSAL))
        return cost, None
    if function == "validate" and args:
        cost = size(args[0]).factor(STRING_TRAVERSAL).factor(MAX_NAME_FORMAT_REGEX * REGEX_LENGTH)
        return cost, None
    if function == "_==_" and len(args) == 2:
        return _equality_cost(args, size)
    return None


def _equality_cost(args: list[Node], size: SizeOf) -> CallCost | None:
    lhs, rhs = args
    if lhs.type.SerializeToString(deterministic=True) != rhs.type.SerializeToString(
        deterministic=True
    ):
        return None
    name = lhs.type.message_type if type_kind(lhs.type) == "struct" else ""
    if name in _UNIT_EQUALITY:
        return ONE, None
    if name == "kubernetes.NamedFormat":
        return Estimate(1, MAX_FORMAT_SIZE).factor(STRING_TRAVERSAL), None
    if name == "kubernetes.URL":
        sz = ONE
        if rhs.computed is not None:
            sz = rhs.computed.union(rhs.computed)
        return Estimate(1, sz.hi).factor(STRING_TRAVERSAL), None
    return None


def _replace_cost(sz: Estimate, old: Estimate, new: Estimate) -> CallCost:
    if old.lo == 0:
        count_hi, kept_hi = (sz.hi + 1 if sz.hi < U64 else sz.hi), sz.hi
    elif new.hi <= old.lo:
        count_hi, kept_hi = 0, sz.hi
    else:
        count_hi, kept_hi = math.ceil(sz.hi / old.lo), 0
    if old.hi == 0:
        count_lo, kept_lo = (sz.lo + 1 if sz.lo < U64 else sz.lo), sz.lo
    elif old.hi <= new.lo:
        count_lo, kept_lo = 0, sz.lo
    else:
        count_lo, kept_lo = math.ceil(sz.lo / old.hi), 0
    result = Estimate(count_lo, count_hi).mul(new).add(Estimate(kept_lo, kept_hi))
    return sz.factor(2 * STRING_TRAVERSAL), result


def _join_cost(target: Node, args: list[Node], size: SizeOf) -> CallCost:
    count = size(target)
    sz = ZERO
    element = _list_element(target)
    if element is not None:
        sz = count.mul(size(element))
    if args:
        separators = Estimate(max(count.lo - 1, 0), max(count.hi - 1, 0))
        sz = sz.add(size(args[0]).mul(separators))
    return sz.factor(STRING_TRAVERSAL), sz


def _int_literal(expr: Any) -> int | None:
    if expr is None or expr.WhichOneof("expr_kind") != "const_expr":
        return None
    kind = expr.const_expr.WhichOneof("constant_kind")
    if kind in ("int64_value", "uint64_value"):
        return int(getattr(expr.const_expr, kind))
    return None


def _allocating(cost_factor: float, count: Estimate) -> CallCost:
    cost = count.factor(cost_factor).add(ONE).add(fixed(LIST_CREATE))
    return cost, count


def _extension_cost(
    overload: str, target: Node | None, args: list[Node], size: SizeOf
) -> CallCost | None:
    """cel-go's sets and lists (v3) overload estimators."""
    if (
        overload
        in ("list_sets_contains_list", "list_sets_intersects_list", "list_sets_equivalent_list")
        and len(args) == 2
    ):
        factor = 2.0 if overload.endswith("equivalent_list") else 1.0
        return size(args[0]).mul(size(args[1])).factor(factor).add(ONE), None
    if overload == "list_slice" and target and len(args) == 2:
        sz = size(target)
        start = _as_uint(args[0], 0)
        end = _as_uint(args[1], sz.hi)
        return _allocating(1, fixed((end - start) % (1 << 64)))
    if overload in ("lists_range", "list_range") and not target and len(args) == 1:
        return _allocating(1, fixed(_as_uint(args[0], U64)))
    if overload == "list_reverse" and target and not args:
        return _allocating(1, size(target))
    if overload in ("list_flatten", "list_flatten_int") and target and len(args) <= 1:
        depth = _as_uint(args[0], U64) if args else 1
        return _allocating(float(depth), size(target))
    if overload == "list_distinct" and target and not args:
        sz = size(target)
        return _allocating(2.0, sz.mul(sz))
    for kind in _COMPARABLE:
        if overload == f"list_{kind}_sort" and target and not args:
            return _sort_cost(size(target), kind)
        if overload == f"list_{kind}_sortByAssociatedKeys" and len(args) == 1:
            return _sort_cost(size(args[0]), kind)
    return None


def _sort_cost(sz: Estimate, kind: str) -> CallCost:
    factor = 2.0 + (STRING_TRAVERSAL if kind in ("string", "bytes") else 0.0)
    return _allocating(factor, sz.mul(sz))


def _as_uint(node: Node, default: int) -> int:
    """cel-go's nodeAsIntValue: an int literal (negative ones count as 0), else ``default``."""
    expr = node.expr
    if expr is None or expr.WhichOneof("expr_kind") != "const_expr":
        return default
    if expr.const_expr.WhichOneof("constant_kind") != "int64_value":
        return default
    return max(int(expr.const_expr.int64_value), 0)


_STRING_COMPARE = {
    "less_string",
    "greater_string",
    "less_equals_string",
    "greater_equals_string",
    "less_bytes",
    "greater_bytes",
    "less_equals_bytes",
    "greater_equals_bytes",
    "equals",
    "not_equals",
}


def builtin_cost(
    c: Coster,
    expr: Any,
    overload: str,
    target: Node | None,
    args: list[Node],
    arg_costs: list[Estimate],
    arg_sum: Estimate,
) -> CallCost:
    """cel-go's functionCost switch for standard functions."""
    size = c.size_of
    if overload == "string_format" and target:
        return size(target).factor(STRING_TRAVERSAL).add(arg_sum), None
    if overload == "string_to_bytes" and len(args) == 1:
        sz = size(args[0])
        return sz.factor(STRING_TRAVERSAL).add(arg_sum), Estimate(sz.lo, _mul4(sz.hi))
    if overload == "bytes_to_string" and len(args) == 1:
        sz = size(args[0])
        return sz.factor(STRING_TRAVERSAL).add(arg_sum), Estimate(sz.lo // 4, sz.hi)
    if overload == "strings_quote" and len(args) == 1:
        sz = size(args[0])
        quoted = Estimate(_plus(sz.lo, 2), _plus(_mul2(sz.hi), 2))
        return sz.factor(STRING_TRAVERSAL).add(arg_sum), quoted
    if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
        return size(args[0]).factor(STRING_TRAVERSAL).add(arg_sum), None
    if overload == "in_list" and len(args) == 2:
        return size(args[1]).factor(1).add(arg_sum), None
    if overload == "matches_string" and target and len(args) == 1:
        str_cost = size(target).add(ONE).factor(STRING_TRAVERSAL)
        return str_cost.mul(size(args[0]).factor(REGEX_LENGTH)).add(arg_sum), None
    if overload == "contains_string" and target and len(args) == 1:
        str_cost = size(target).factor(STRING_TRAVERSAL)
        return str_cost.mul(size(args[0]).factor(STRING_TRAVERSAL)).add(arg_sum), None
    if overload in ("logical_or", "logical_and"):
        lhs, rhs = arg_costs[0], arg_costs[1]
        return Estimate(lhs.lo, lhs.add(rhs).hi), None
    if overload == "conditional":
        call_args = expr.call_expr.args
        result = size(args[1]).union(size(args[2]))
        left, right = c.entry_size(call_args[1]), c.entry_size(call_args[2])
        if left is not None and right is not None:
            c.entries[expr.id] = (left[0], left[1].union(right[1]), left[2].union(right[2]))
        return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), result
    if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
        return _concat(c, expr, overload, args, arg_sum)
    if overload in _STRING_COMPARE:
        lhs, rhs = size(args[0]), size(args[1])
        smallest = min(lhs.hi, rhs.hi)
        return Estimate(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL).add(
            arg_sum
        ), None
    return ONE.add(arg_sum), None


def _concat(c: Coster, expr: Any, overload: str, args: list[Node], arg_sum: Estimate) -> CallCost:
    result = c.size_of(args[0]).add(c.size_of(args[1]))
    call_args = expr.call_expr.args
    left, right = c.entry_size(call_args[0]), c.entry_size(call_args[1])
    if left is not None and right is not None:
        c.entries[expr.id] = (left[0], left[1].union(right[1]), left[2].union(right[2]))
    if overload == "add_list":
        return ONE.add(arg_sum), result
    return result.factor(STRING_TRAVERSAL).add(arg_sum), result


def _mul4(x: int) -> int:
    return U64 if x > U64 // 4 else x * 4


def _mul2(x: int) -> int:
    return U64 if x > U64 // 2 else x * 2


def _plus(x: int, y: int) -> int:
    return U64 if x > U64 - y else x + y


def estimate(checked: Checked, sizes: SizeEstimator) -> Estimate:
    """The cost range of evaluating ``checked`` once."""
    return Coster(checked, sizes, library_call_cost, builtin_cost).cost(checked.ast.expr)


__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "STATIC_CRD_LIMIT",
    "STATIC_RULE_LIMIT",
    "U64",
    "Estimate",
    "Node",
    "estimate",
    "type_kind",
]
