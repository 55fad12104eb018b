"""The value walks of server-side apply: field sets, comparison, merge and pruning.

Each follows structured-merge-diff's typed walkers: list items and map entries are
identified by their path element, so a list item moved within a list keeps its
identity, and leaves (scalars and atomic parts) are compared as whole values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.fieldmanager.fieldpath import FieldSet, Path, prefixes
from platform_api.fieldmanager.typed import INDEXED, KEYED, LEAF, MAP, SET, STRUCT, Shape, Typed
from platform_api.scheme.schemas import Node

Obj = dict[str, Any]
_MISSING: Any = object()


def to_field_set(typed: Typed, node: Node, value: Any) -> FieldSet:
    """The fields a value sets (``ToFieldSet``): what an applier of it owns."""
    out: FieldSet = set()
    _field_set(typed, node, value, (), out)
    return out


def _field_set(typed: Typed, node: Node, value: Any, path: Path, out: FieldSet) -> None:
    shape = typed.shape(node, value)
    if shape.kind == LEAF:
        if path:
            out.add(path)
        return
    is_list = shape.kind in (SET, KEYED, INDEXED)
    for element, (child_node, child, named) in typed.children(shape, value).items():
        child_path = (*path, element)
        _field_set(typed, child_node, child, child_path, out)
        if is_list or child is None or child == {} or not named:
            out.add(child_path)


@dataclass
class Comparison:
    removed: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    added: FieldSet = field(default_factory=set)


def compare(typed: Typed, node: Node, lhs: Any, rhs: Any) -> Comparison:
    """What changed from ``lhs`` to ``rhs``, by field path."""
    result = Comparison()
    _compare(typed, node, lhs, rhs, (), result, lhs is not _MISSING)
    return result


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _compare(
    typed: Typed, node: Node, lhs: Any, rhs: Any, path: Path, c: Comparison, go_value: bool
) -> None:
    """``go_value``: the live side is a Go value here even where ``lhs`` is missing (the
    zero value of a field Go always serializes), so its always-serialized fields are
    not added either, as kube's comparison of Go objects finds."""
    if lhs is not _MISSING and rhs is not _MISSING and _same(lhs, rhs):
        return  # deep equality runs in C: unchanged subtrees cost next to nothing
    shape = typed.shape(node, lhs if rhs is _MISSING else rhs)
    if lhs is None and rhs is not _MISSING and shape.kind != LEAF and typed.declares(node):
        lhs = {} if shape.kind in (STRUCT, MAP) else []  # null: an empty one, as SMD reads it
    elif rhs is None and lhs is not _MISSING and typed.declares(node):
        held = typed.shape(node, lhs)
        if held.kind != LEAF:
            shape, rhs = held, {} if held.kind in (STRUCT, MAP) else []
    if lhs is not _MISSING and rhs is not _MISSING and typed.shape(node, lhs).kind != shape.kind:
        shape = typed.shape(node, None)  # changed shape: compare as a whole
    if shape.kind == LEAF:
        if lhs is _MISSING:
            if not (go_value and _go_zero(shape, rhs)):
                c.added.add(path)
        elif rhs is _MISSING:
            c.removed.add(path)
        elif not _same(lhs, rhs):
            c.modified.add(path)
        return
    left = typed.children(shape, lhs) if lhs is not _MISSING else {}
    right = typed.children(shape, rhs) if rhs is not _MISSING else {}
    in_go_value = lhs is not _MISSING or go_value
    for element in list(left) + [e for e in right if e not in left]:
        child_path = (*path, element)
        lchild = left.get(element)
        rchild = right.get(element)
        child_node = (rchild or lchild)[0]  # type: ignore[index]
        zero = lchild is None and in_go_value and typed.zero_present(shape, element)
        _compare(
            typed,
            child_node,
            lchild[1] if lchild else _MISSING,
            rchild[1] if rchild else _MISSING,
            child_path,
            c,
            zero,
        )
        if lchild is None:
            if not zero:
                c.added.add(child_path)
        elif rchild is None:
            c.removed.add(child_path)


def _go_zero(shape: Shape, value: Any) -> bool:
    """Whether ``value`` is what Go writes for the zero value of a field it always writes
    (a Go object has it): ``""``, ``0``, ``false``, ``null`` (a nil list, map or time)
    or ``{}`` for an atomic struct (a pod selector), so a write of it adds nothing, as
    kube's comparison finds."""
    if value is None:
        return True
    if isinstance(value, dict):
        return not value and bool(shape.node.get("properties"))
    return isinstance(value, str | int | float) and not value


def merge(typed: Typed, node: Node, lhs: Any, rhs: Any) -> Any:
    """``lhs`` with ``rhs`` merged in (``live.Merge(config)``).  A null is set, as
    structured-merge-diff sets it (it changes the field, for conflicts; a built-in
    kind's caller then drops it with ``without_nulls``: its Go value has none), but a
    null struct, map or list merges into a non-empty one as an empty one would."""
    if rhs is None:
        if lhs is not _MISSING and lhs and typed.shape(node, lhs).kind != LEAF:
            return lhs
        return None
    shape = typed.shape(node, rhs)
    if lhs is _MISSING or shape.kind == LEAF or typed.shape(node, lhs).kind != shape.kind:
        return rhs  # the configuration is the caller's own copy: no need to copy again
    if isinstance(rhs, dict):
        out = dict(lhs)
        for name, value in rhs.items():
            child_node, _ = typed.field(shape, name)
            out[name] = merge(typed, child_node, lhs.get(name, _MISSING), value)
        return out
    return _merge_list(typed, shape, lhs, rhs)


def without_nulls(value: Any) -> Any:
    """``value`` without its null fields, at every level: a merged built-in object as
    its Go type holds it (a null pointer, map or list field is no field)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def _merge_list(typed: Typed, shape: Shape, lhs: list[Any], rhs: list[Any]) -> list[Any]:
    """Merge list items by identity, ordered as structured-merge-diff orders them."""
    items = typed.items(shape)
    left = [(typed.item_element(shape, v, i), v) for i, v in enumerate(lhs)]
    right = [(typed.item_element(shape, v, i), v) for i, v in enumerate(rhs)]
    lmap, rmap = dict(left), dict(right)
    shared = [e for e, _ in right if e in lmap]
    next_shared = shared.pop(0) if shared else None
    out: list[Any] = []
    done: set[str] = set()
    li = ri = 0
    while li < len(left) or ri < len(right):
        if li < len(left) and ri < len(right):
            element = left[li][0]
            if element == right[ri][0]:
                done.add(element)
                out.append(merge(typed, items, lmap[element], rmap[element]))
                li, ri = li + 1, ri + 1
                next_shared = shared.pop(0) if shared else None
                continue
            if element in rmap and next_shared is not None and next_shared != element:
                li += 1
                continue
        if li < len(left):
            element, value = left[li]
            if element not in rmap:
                out.append(value)
                li += 1
                continue
            if element in done:
                li += 1
                continue
        if ri < len(right):
            element = right[ri][0]
            done.add(element)
            out.append(merge(typed, items, lmap.get(element, _MISSING), rmap[element]))
            ri += 1
            if next_shared == element:
                next_shared = shared.pop(0) if shared else None
    return out


def prune(typed: Typed, node: Node, value: Obj, released: FieldSet, owned: FieldSet) -> Obj:
    """Remove what an applier released (``released``) that no manager owns (``owned``).

    Parts nobody ever applied stay; a struct or map the removal leaves empty goes too,
    and so does a struct field above what was released that is left holding nothing a
    field set sees (only empty lists), owned or not: kube's prune counts such a field
    among what the applier applied (``EnsureNamedFieldsAreMembers``) and removes what
    of that is no longer in the pruned object's field set.
    """
    pruner = _Pruner(typed, released, owned)
    result: Obj = pruner.children(typed.shape(node, value), value, ())
    held = (pruner.released_above & owned) - released  # (the rest went whole, or shows)
    for path in sorted(_unseen_parents(typed, node, result, held), key=len):
        _remove(typed, node, result, path)
    return result


def _unseen_parents(typed: Typed, node: Node, value: Obj, candidates: set[Path]) -> set[Path]:
    """Of the ``candidates``, the struct fields whose value has no field set of its own."""
    out: set[Path] = set()
    for path in candidates:
        found = _at(typed, node, value, path)
        if found is None:
            continue
        child_node, child, named = found
        if named and child not in (None, {}) and not to_field_set(typed, child_node, child):
            out.add(path)
    return out


def _at(typed: Typed, node: Node, value: Any, path: Path) -> tuple[Node, Any, bool] | None:
    """The schema, value and namedness of ``path`` in ``value``; None when absent."""
    found: tuple[Node, Any, bool] | None = None
    for element in path:
        shape = typed.shape(node, value)
        if shape.kind == LEAF:
            return None
        found = typed.children(shape, value).get(element)
        if found is None:
            return None
        node, value = found[0], found[1]
    return found


def _remove(typed: Typed, node: Node, value: Obj, path: Path) -> None:
    """Drop ``path`` (a struct field) from ``value`` in place, if still there."""
    parent = _at(typed, node, value, path[:-1]) if len(path) > 1 else (node, value, False)
    if parent is not None and isinstance(parent[1], dict):
        parent[1].pop(path[-1][2:], None)


_ITEM_KEYS = ("k:", "v:", "i:")  # path elements of list items


class _Pruner:
    def __init__(self, typed: Typed, released: FieldSet, owned: FieldSet) -> None:
        self.typed = typed
        self.released = released
        self.released_above = prefixes(released)
        self.owned = owned
        # what is owned beneath a released list item nobody else owns does not hold what
        # is above it: the item goes whole, and with it those fields
        items = [p for p in released if p and p[-1][:2] in _ITEM_KEYS and p not in owned]
        held = {o for o in owned if not any(len(o) > len(i) and o[: len(i)] == i for i in items)}
        self.owned_above = prefixes(held)

    def children(self, shape: Shape, value: Any, path: Path) -> Any:
        kept: list[tuple[str, Any]] = []
        for element, (node, child, named) in self.typed.children(shape, value).items():
            child_path = (*path, element)
            keep, pruned = self.child(node, child, child_path, named)
            if keep:
                kept.append((element, pruned))
        if isinstance(value, dict):
            return {element[2:]: child for element, child in kept}
        return [child for _, child in kept]

    def child(self, node: Node, value: Any, path: Path, named: bool) -> tuple[bool, Any]:
        if path not in self.released and path not in self.released_above:
            return True, value  # never applied by this manager: not its to remove
        if path in self.owned:
            return True, self._descend(node, value, path)
        shape = self.typed.shape(node, value)
        released = path in self.released
        if shape.kind == LEAF or (released and not named):
            # a list item or map entry nobody owns goes whole, even if a field in it is
            # owned: kube counts only named struct fields as owned by what lies beneath
            return False, None
        if path not in self.owned_above and (released or named):
            # a struct field above what was released, nothing beneath anyone's: it goes
            # whole, with what the server defaulted in it (kube counts it as applied)
            return False, None
        pruned = self.children(shape, value, path)
        # a list left without items goes (kube leaves it null, which decodes as absent)
        return bool(pruned) or (path in self.owned_above and isinstance(pruned, dict)), pruned

    def _descend(self, node: Node, value: Any, path: Path) -> Any:
        shape = self.typed.shape(node, value)
        return value if shape.kind == LEAF else self.children(shape, value, path)


def atomic_paths(typed: Typed, node: Node, config: Any) -> list[str]:
    """Where an apply configuration sets a whole atomic list, map or struct (kube's
    mutating policies refuse those: the configuration would drop what it leaves out)."""
    out: list[str] = []
    _atomics(typed, node, config, "", out)
    return out


def _atomics(typed: Typed, node: Node, value: Any, path: str, out: list[str]) -> None:
    if not isinstance(value, (dict, list)):
        return
    shape = typed.shape(node, value)
    if shape.kind == LEAF:
        out.append(path or ".")
    elif isinstance(value, dict):
        for name, child in value.items():
            _atomics(typed, typed.field(shape, name)[0], child, f"{path}.{name}", out)
    else:
        items = typed.items(shape)
        for i, child in enumerate(value):
            _atomics(typed, items, child, f"{path}[{i}]", out)


def remove_items(typed: Typed, node: Node, value: Any, paths: FieldSet) -> Any:
    """``value`` without ``paths`` (structured-merge-diff's ``RemoveItems``): a path in
    the set goes whole, one above a path in it is walked, and a list or map walked
    into that is left with nothing, is empty already or atomic becomes None (null)."""
    return _removed(typed, node, value, paths, prefixes(paths), ())


def _removed(
    typed: Typed, node: Node, value: Any, paths: FieldSet, above: set[Path], path: Path
) -> Any:
    shape = typed.shape(node, value)
    if shape.kind == LEAF:
        return None if isinstance(value, dict | list) else value
    kept: list[tuple[str, Any]] = []
    for element, (child_node, child, _named) in typed.children(shape, value).items():
        child_path = (*path, element)
        if child_path in paths:
            continue
        if child_path in above:
            kept.append((element, _removed(typed, child_node, child, paths, above, child_path)))
        else:
            kept.append((element, child))
    if not kept:
        return None
    if isinstance(value, dict):
        return {element[2:]: child for element, child in kept}
    return [child for _, child in kept]


def ensure_named(typed: Typed, node: Node, paths: FieldSet) -> FieldSet:
    """``paths`` with each declared struct field above one of them as a member too
    (structured-merge-diff's ``EnsureNamedFieldsAreMembers``)."""
    out = set(paths)
    for path in prefixes(paths) - paths:
        if path and path[-1].startswith("f:") and _declared_field(typed, node, path):
            out.add(path)
    return out


def _declared_field(typed: Typed, node: Node, path: Path) -> bool:
    """Whether ``path``'s last element is a field its parent struct declares."""
    shape = typed.declared_shape(node)
    for element in path[:-1]:
        shape = typed.declared_child(shape, element) if shape is not None else None
    if shape is None or shape.kind != STRUCT:
        return False
    return Typed.field(shape, path[-1][2:])[1]
