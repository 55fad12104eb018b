"""``x-kubernetes-list-type`` set and map invariants (kube's ``listtype`` package).

A set may not hold an item twice, a map-list may not hold two items with the same keys; each
repetition after the first is reported once as ``Duplicate value``. Items compare as Go
does: scalars by type and value (``1`` and ``1.0`` differ), objects and lists by their JSON.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.gotext import bad_value, go_json
from platform_api.apiextensions.schema.node import Node
from platform_api.validation import field
from platform_api.validation.field import FieldError

_UNSPECIFIED = ("unspecified",)


def validate_lists(obj: Any, schema: Node | None, path: str | None = None) -> list[FieldError]:
    """``ValidateListSetsAndMaps`` of an object (the root of a custom resource)."""
    if schema is None or not schema.lists_inside or not isinstance(obj, dict):
        return []
    errs: list[FieldError] = []
    _object(path, schema, obj, errs)
    return errs


def _child(path: str | None, name: str) -> str:
    return name if not path else f"{path}.{name}"


def _object(path: str | None, s: Node, obj: dict[str, Any], errs: list[FieldError]) -> None:
    if s.additional is not None:
        for key, value in obj.items():
            _value(f"{path or ''}[{key}]", s.additional, value, errs)
    if s.properties:
        for key, sub in s.deep_lists:
            if key in obj:
                _value(_child(path, key), sub, obj[key], errs)


def _value(path: str, s: Node, value: Any, errs: list[FieldError]) -> None:
    if not s.lists_inside:
        return
    if isinstance(value, list):
        _array(path, s, value, errs)
    elif isinstance(value, dict):
        _object(path, s, value, errs)


def _array(path: str, s: Node, items: list[Any], errs: list[FieldError]) -> None:
    if s.list_type == "set":
        for i in _repeated(items):
            errs.append(field.duplicate(f"{path}[{i}]", bad_value(items[i])))
    elif s.list_type == "map":
        errs += _map(path, s, items)
    if s.items is not None:
        for i, item in enumerate(items):
            _value(f"{path}[{i}]", s.items, item, errs)


def _identity(item: Any) -> Any:
    if isinstance(item, dict | list):
        return ("json", go_json(item))
    return (type(item), item)


def _repeated(items: list[Any]) -> list[int]:
    """Indices of the second appearance of each repeated item."""
    if len(items) <= 1:
        return []
    seen: dict[Any, int] = {}
    out = []
    for i, item in enumerate(items):
        key = item if item is _UNSPECIFIED else _identity(item)
        times = seen.get(key, 0)
        if times == 1:
            out.append(i)
        seen[key] = times + 1
    return out


def _map(path: str, s: Node, items: list[Any]) -> list[FieldError]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            msg = "must be an object for an array of list-type map"
            return [field.invalid(f"{path}[{i}]", bad_value(item), msg)]
    if len(items) <= 1:
        return []
    keys = s.list_map_keys
    if len(keys) == 1:
        name = keys[0]
        values = [_UNSPECIFIED if x is None or name not in x else x[name] for x in items]
        return [
            field.duplicate(
                f"{path}[{i}]",
                bad_value({} if values[i] is _UNSPECIFIED else {name: values[i]}),
            )
            for i in _repeated(values)
        ]
    composite = [{k: x[k] for k in keys if k in x} if x is not None else {} for x in items]
    return [field.duplicate(f"{path}[{i}]", bad_value(composite[i])) for i in _repeated(composite)]
