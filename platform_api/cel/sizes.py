"""Size estimators for the coster: from a schema (static), or from actual values (runtime).

Paths start with the variable (``self``/``oldSelf``) and step through escaped field names,
``@items``/``@values`` (elements) and ``@keys``, as cel-go's coster names them.
"""

from __future__ import annotations

from typing import Any

from platform_api.cel.coster import U64, Estimate, Node
from platform_api.cel.schematypes import DeclType

_KEY = DeclType("string", max_elements=0)  # kube's map key type: a plain StringType


def walk_decl(root: DeclType, steps: list[str]) -> DeclType | None:
    node: DeclType | None = root
    for step in steps:
        if node is None:
            return None
        if step in ("@items", "@values"):
            node = node.elem
        elif step == "@keys":
            node = _KEY if node.kind == "map" else None
        else:
            node = node.field_type(step)
    return node


class DeclSizes:
    """kube's CRD sizeEstimator: ``[0, maxElements]`` of the declared type at the path."""

    def __init__(self, root: DeclType) -> None:
        self.root = root

    def size(self, node: Node) -> Estimate | None:
        if not node.path:
            return None
        found = walk_decl(self.root, node.path[1:])
        return Estimate(0, found.max_elements) if found is not None else None


def value_size(value: Any) -> int:
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    return 1


class ActualSizes:
    """Sizes of the values an evaluation sees: the largest value found at the path."""

    def __init__(self, root: DeclType, values: dict[str, Any]) -> None:
        self.root = root
        self.values = values

    def size(self, node: Node) -> Estimate | None:
        if not node.path or node.path[0] not in self.values:
            return None
        current: list[tuple[Any, DeclType | None]] = [(self.values[node.path[0]], self.root)]
        for step in node.path[1:]:
            current = [pair for value, t in current for pair in _step(value, t, step)]
        if not current:
            return Estimate(0, 0)
        largest = max(value_size(v) for v, _ in current)
        return Estimate(0, min(largest, U64))


def _step(value: Any, t: DeclType | None, step: str) -> list[tuple[Any, DeclType | None]]:
    elem = t.elem if t is not None else None
    if step in ("@items", "@values"):
        items = (
            value
            if isinstance(value, list)
            else (list(value.values()) if isinstance(value, dict) else [])
        )
        return [(item, elem) for item in items]
    if step == "@keys":
        return [(k, None) for k in value] if isinstance(value, dict) else []
    if not isinstance(value, dict):
        return []
    name = step
    if t is not None and step in t.fields:
        name = t.fields[step][0]
    return [(value[name], t.field_type(step) if t else None)] if name in value else []
