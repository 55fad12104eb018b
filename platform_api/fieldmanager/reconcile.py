"""Managed fields after a schema change: structured-merge-diff's
``ReconcileFieldSetWithSchema``, which kube runs on every entry before each write.

A CRD may make a granular list or map atomic; an entry written before owns items of
it.  kube cuts such an entry back to the atomic field itself.  The reverse change
needs nothing (a field owned whole stays owned whole), and parts the schema does not
type (preserved unknown fields) are left as they are, as SMD leaves deduced types.
"""

from __future__ import annotations

from platform_api.fieldmanager.fieldpath import FieldSet, Path
from platform_api.fieldmanager.typed import INDEXED, KEYED, LEAF, MAP, SET, STRUCT, Shape, Typed
from platform_api.scheme.schemas import Node

_LISTS = (SET, KEYED, INDEXED)


def reconcile(typed: Typed, node: Node, fields: FieldSet) -> FieldSet | None:
    """``fields`` with what lies under an atomic field replaced by that field; None when
    nothing is under one."""
    atomic = _atomic_prefixes(typed, node, fields)
    if not atomic:
        return None
    kept = {p for p in fields if not any(p[: len(a)] == a for a in atomic if len(p) > len(a))}
    return kept | atomic


def _atomic_prefixes(typed: Typed, node: Node, fields: FieldSet) -> set[Path]:
    """The atomic fields some path of ``fields`` goes below."""
    shapes: dict[Path, Shape | None] = {(): typed.declared_shape(node)}
    found: set[Path] = set()
    for path in fields:
        for depth in range(1, len(path)):
            prefix = path[:depth]
            if prefix in shapes:
                shape = shapes[prefix]
            else:
                parent = shapes[path[: depth - 1]]
                shape = shapes[prefix] = _child(typed, parent, path[depth - 1])
            if shape is None:
                break
            if shape.kind == LEAF:
                found.add(prefix)
                break
    return found


def _child(typed: Typed, parent: Shape | None, element: str) -> Shape | None:
    """The declared shape of ``element`` under ``parent``; None where the schema gives
    none (an undeclared field, a scalar, an element of the wrong kind)."""
    if parent is None or parent.kind == LEAF:
        return None
    if element.startswith("f:"):
        if parent.kind not in (STRUCT, MAP):
            return None
        return typed.declared_shape(Typed.field(parent, element[2:])[0])
    if parent.kind in _LISTS:
        return typed.declared_shape(Typed.items(parent))
    return None
