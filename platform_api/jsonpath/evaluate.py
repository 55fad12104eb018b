"""Evaluating a parsed template on JSON data, node by node, as kube's ``jsonpath.go`` does.

Every node maps a list of values to a list of values.  kube keeps its range counters on
the ``JSONPath`` object and rewrites the parsed tree while it runs; here they live in a
``Run`` made per evaluation, so the parsed template is never changed and one instance
serves any number of objects (a printer column is evaluated per row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.jsonpath.compare import COMPARISONS
from platform_api.jsonpath.gotext import NO_VALUE, GoByte, go_type, sprint
from platform_api.jsonpath.nodes import (
    ArrayNode,
    BoolNode,
    FieldNode,
    FilterNode,
    FloatNode,
    IdentifierNode,
    IntNode,
    ListNode,
    Node,
    RecursiveNode,
    TextNode,
    UnionNode,
    WildcardNode,
)
from platform_api.jsonpath.parser import JSONPathError

Values = list[Any]


class Run:
    """The state of one evaluation: ``range`` blocks opened, entered and closed."""

    __slots__ = ("allow_missing", "begin_range", "end_range", "in_range", "last_end")

    def __init__(self, allow_missing: bool) -> None:
        self.allow_missing = allow_missing
        self.begin_range = 0
        self.in_range = 0
        self.end_range = 0
        self.last_end = -1  # index of the top-level node of the latest ``{end}``


def find(run: Run, nodes: list[Node], data: Any, first: int = 0) -> list[Values]:
    """kube's ``FindResults`` over ``nodes[first:]``: one result list per node or range pass."""
    current: Values = [NO_VALUE if data is None else data]
    results: list[Values] = []
    i = first
    while i < len(nodes):
        found = evaluate(run, current, nodes[i])
        if 0 < run.end_range <= run.in_range:  # an ``{end}`` closes the block being run
            run.end_range -= 1
            run.last_end = i
            break
        if run.begin_range > 0:  # a ``{range ...}``: run what follows once per value
            run.begin_range -= 1
            run.in_range += 1
            if found:
                for value in found:
                    results.extend(find(run, nodes, value, i + 1))
            else:  # still walk the block (its errors count) to find its end
                find(run, nodes, None, i + 1)
            run.in_range -= 1
            i = max(i, run.last_end)
            i += 1
            continue
        results.append(found)
        i += 1
    return results


def evaluate(run: Run, values: Values, node: Node) -> Values:
    return _EVALUATORS[type(node)](run, values, node)


def _list(run: Run, values: Values, node: ListNode) -> Values:
    for child in node.nodes:
        values = _EVALUATORS[type(child)](run, values, child)
    return values


def _text(run: Run, values: Values, node: TextNode) -> Values:
    return [node.text]


def _literal(run: Run, values: Values, node: IntNode | FloatNode | BoolNode) -> Values:
    return [node.value] * len(values)


def _identifier(run: Run, values: Values, node: IdentifierNode) -> Values:
    if node.name == "range":
        run.begin_range += 1
        return values
    if node.name == "end":
        if run.in_range <= 0:
            raise JSONPathError("not in range, nothing to end")
        run.end_range += 1
        return []
    raise JSONPathError(f"unrecognized identifier {node.name}", values)


def _field(run: Run, values: Values, node: FieldNode) -> Values:
    if not values:
        return []
    key = node.value
    found = [value[key] for value in values if isinstance(value, dict) and key in value]
    if not found and not run.allow_missing:
        raise JSONPathError(f"{key} is not found")
    return found


def _array(run: Run, values: Values, node: ArrayNode) -> Values:
    result: Values = []
    for value in values:
        if value is None:
            continue
        if value is NO_VALUE:  # kube asks an invalid reflect.Value for its type: a panic
            raise JSONPathError("reflect: call of reflect.Value.Type on zero Value")
        if not isinstance(value, list):
            raise JSONPathError(f"{go_type(value)} is not array or slice", values)
        length = len(value)
        start = node.start.value if node.start.known else 0
        if start < 0:
            start += length
        end = node.end.value if node.end.known else length
        if end < 0 or (end == 0 and node.end.derived):
            end += length
        if start == end:  # zero elements asked for: kube returns at once, whatever follows
            return result
        if start >= length or start < 0:
            raise JSONPathError(
                f"array index out of bounds: index {start}, length {length}", values
            )
        if end > length or end < 0:
            raise JSONPathError(
                f"array index out of bounds: index {end - 1}, length {length}", values
            )
        if start > end:
            raise JSONPathError(
                f"starting index {start} is greater than ending index {end}", values
            )
        step = 1
        if node.step.known:
            if node.step.value <= 0:
                raise JSONPathError("step must be > 0", values)
            step = node.step.value
        result.extend(value[start:end:step])
    return result


def _union(run: Run, values: Values, node: UnionNode) -> Values:
    result: Values = []
    for member in node.nodes:
        try:
            result.extend(_list(run, values, member))
        except JSONPathError as e:
            e.partial = values
            raise
    return result


def _children(value: Any) -> Values:
    """What ``*`` and ``..`` see below a value: map values, list items, a string's bytes."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [GoByte(byte) for byte in value.encode()]
    return []


def _wildcard(run: Run, values: Values, node: WildcardNode) -> Values:
    result: Values = []
    for value in values:
        result.extend(_children(value))
    return result


def _recursive(run: Run, values: Values, node: RecursiveNode) -> Values:
    """Depth first, each value before its descendants; values without children are left out."""
    result: Values = []
    stack = list(reversed(values))
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if value:
                result.append(value)  # its bytes have no children of their own
            continue
        children = _children(value)
        if children:
            result.append(value)
            stack.extend(reversed(children))
    return result


def _filter(run: Run, values: Values, node: FilterNode) -> Values:
    result: Values = []
    for value in values:
        if not isinstance(value, list):
            raise JSONPathError(
                f"{sprint(value)} is not array or slice and cannot be filtered", values
            )
        for item in value:
            if node.operator == "exists":
                try:
                    lefts = _list(run, [item], node.left)
                except JSONPathError as e:
                    lefts = e.partial
                if lefts:
                    result.append(item)
                continue
            left = _operand(run, values, item, node.left)
            if left is _NONE:
                continue
            right = _operand(run, values, item, node.right)
            if right is _NONE:
                continue
            compare = COMPARISONS.get(node.operator)
            if compare is None:
                raise JSONPathError(f"unrecognized filter operator {node.operator}", result)
            try:
                passed = compare(left, right)
            except JSONPathError as e:
                e.partial = result
                raise
            if passed:
                result.append(item)
    return result


_NONE = object()


def _operand(run: Run, values: Values, item: Any, node: ListNode) -> Any:
    """One side of a comparison: its single value, or ``_NONE`` when it has none."""
    try:
        found = _list(run, [item], node)
    except JSONPathError as e:
        e.partial = values
        raise
    if not found:
        return _NONE
    if len(found) > 1:
        raise JSONPathError("can only compare one element at a time", values)
    return found[0]


_EVALUATORS: dict[type[Node], Callable[[Run, Values, Any], Values]] = {
    ListNode: _list,
    TextNode: _text,
    FieldNode: _field,
    ArrayNode: _array,
    FilterNode: _filter,
    IntNode: _literal,
    FloatNode: _literal,
    BoolNode: _literal,
    WildcardNode: _wildcard,
    RecursiveNode: _recursive,
    UnionNode: _union,
    IdentifierNode: _identifier,
}
