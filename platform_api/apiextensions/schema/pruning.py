"""Dropping the fields a structural schema does not specify (kube's ``pruning`` package).

At the root and inside ``x-kubernetes-embedded-resource`` objects, ``apiVersion``, ``kind`` and
``metadata`` are kept (metadata is cut down to ObjectMeta by ``objectmeta.py``);
``x-kubernetes-preserve-unknown-fields`` keeps what is not specified while still pruning
inside specified fields. With ``track`` the pruned paths come back as kube reports them to
``fieldValidation`` (``spec.foo``, ``spec.items[0].bar``), sorted.

``drop_nulls`` also performs kube's next decoding step in the same walk
(``PruneNonNullableNullsWithoutDefaults``: a null where the schema allows no null and has no
default is removed), which only ever concerns fields the schema specifies.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.node import EMPTY, MISSING, Node

_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


class _Walk:
    __slots__ = ("drop_nulls", "found")

    def __init__(self, track: bool, drop_nulls: bool) -> None:
        self.found: list[str] | None = [] if track else None
        self.drop_nulls = drop_nulls


def prune(
    obj: Any, schema: Node | None, root: bool = True, track: bool = False, drop_nulls: bool = False
) -> list[str]:
    """Prune ``obj`` in place; with ``track``, the sorted paths of the dropped fields."""
    if root:
        schema = (schema or EMPTY).as_embedded()
    walk = _Walk(track, drop_nulls)
    _prune(obj, schema, "", walk)
    return sorted(walk.found) if walk.found else []


def _key(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _null_to_drop(value: Any, s: Node | None, walk: _Walk) -> bool:
    return (
        value is None
        and walk.drop_nulls
        and s is not None
        and not s.nullable
        and s.default is MISSING
    )


def _prune(x: Any, s: Node | None, path: str, walk: _Walk) -> None:
    if s is not None and s.preserve_unknown:
        _skip(x, s, path, walk)
        return
    found = walk.found
    if isinstance(x, dict):
        if s is None:
            if found is not None:
                found.extend(_key(path, key) for key in x)
            x.clear()
            return
        props, additional_present, embedded = s.properties, s.additional_present, s.embedded
        doomed: list[str] = []
        for key, value in x.items():
            if embedded and key in _META_FIELDS:
                if value is None and _null_to_drop(value, s.child(key), walk):
                    doomed.append(key)
                continue
            sub = props.get(key)
            if sub is None and not additional_present:
                if found is not None and (key not in _META_FIELDS or path):
                    found.append(_key(path, key))
                doomed.append(key)
                continue
            if sub is None:
                sub = s.additional
            if _null_to_drop(value, sub, walk):
                doomed.append(key)
            elif isinstance(value, dict | list):
                _prune(value, sub, _key(path, key) if found is not None else "", walk)
        for key in doomed:
            del x[key]
    elif isinstance(x, list):
        items = None if s is None else s.items
        for i, value in enumerate(x):
            if isinstance(value, dict | list):
                _prune(value, items, f"{path}[{i}]" if found is not None else "", walk)


def _skip(x: Any, s: Node, path: str, walk: _Walk) -> None:
    """Under x-kubernetes-preserve-unknown-fields: keep unknown fields, prune known ones."""
    if isinstance(x, dict):
        doomed = []
        for key, value in x.items():
            if s.embedded and key in _META_FIELDS:
                continue
            sub = s.properties.get(key)
            if sub is None:
                if not s.additional_present:
                    continue
                sub = s.additional
            if _null_to_drop(value, sub, walk):
                doomed.append(key)
            elif isinstance(value, dict | list):
                _prune(value, sub, _key(path, key), walk)
        for key in doomed:
            del x[key]
    elif isinstance(x, list) and s.items is not None:
        for i, value in enumerate(x):
            if isinstance(value, dict | list):
                _skip(value, s.items, f"{path}[{i}]", walk)
