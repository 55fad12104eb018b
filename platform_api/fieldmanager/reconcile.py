"""Managed fields after a schema change: structured-merge-diff's
``ReconcileFieldSetWithSchema``, which kube runs on every entry before each write.

A CRD may make a granular list or map atomic; an entry written before owns items of
it.  kube cuts such an entry back to the atomic field itself.  The reverse change
needs nothing (a field owned whole stays owned whole), and parts the schema does not
type (preserved unknown fields) are left as they are, as SMD leaves deduced types.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from platform_api.fieldmanager.fieldpath import FieldSet, Path
from platform_api.fieldmanager.typed import LEAF, Typed
from platform_api.scheme.schemas import Node

# Results by the set of fields, per Typed (whose cached shapes they rest on): most of an
# object's entries are the same from one write to the next.
_DONE: WeakKeyDictionary[Typed, dict[tuple[int, frozenset[Path]], FieldSet | None]]
_DONE = WeakKeyDictionary()
_KEEP = 4096


def reconcile(typed: Typed, node: Node, fields: FieldSet) -> FieldSet | None:
    """``fields`` with what lies under an atomic field replaced by that field; None when
    nothing is under one."""
    done = _DONE.get(typed)
    if done is None:
        done = _DONE[typed] = {}
    key = (id(node), frozenset(fields))
    if key in done:
        found = done[key]
        return None if found is None else set(found)
    if len(done) >= _KEEP:
        done.clear()
    found = done[key] = _reconciled(typed, node, fields)
    return None if found is None else set(found)


def _reconciled(typed: Typed, node: Node, fields: FieldSet) -> FieldSet | None:
    root = typed.declared_shape(node)
    atomic: set[Path] = set()
    for path in fields:
        shape = root
        for depth in range(len(path) - 1):
            shape = typed.declared_child(shape, path[depth]) if shape is not None else None
            if shape is None:
                break
            if shape.kind == LEAF:
                atomic.add(path[: depth + 1])
                break
    if not atomic:
        return None
    kept = {p for p in fields if not any(p[: len(a)] == a for a in atomic if len(p) > len(a))}
    return kept | atomic
