"""Field paths and old-value correlation for CRD validation rules.

``valid_field_path`` is kube's ``ValidFieldPath`` (the ``fieldPath`` of a rule: ``.a.b``,
``['key']``, ``.a['b.c']``); ``Correlation`` is kube's ``CorrelatedObject``, which decides
whether an error sits on a value unchanged since the old object (ratcheting), and
``map_list_get`` finds the old item of a ``x-kubernetes-list-type: map`` list.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "'": "'",
    "\\": "\\",
}


class PathError(ValueError):
    pass


def _tokens(path: str) -> list[str]:
    tokens, i = [], 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            tokens.append(path[i : j + 1])
            i = j + 1
        elif path[i] in ".[]":
            tokens.append(path[i])
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            tokens.append(path[i:j])
            i = j
    return tokens


def _unquote(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        ch = match.group(0)[1]
        if ch not in _ESCAPES:
            raise PathError(f"invalid string literal: invalid escape char {match.group(0)}")
        return _ESCAPES[ch]

    return re.sub(r"\\.", repl, text)


def valid_field_path(
    path: str, schema: dict[str, Any], allow_array_notation: bool = True
) -> tuple[str, dict[str, Any]]:
    """(normalized field path, schema found) or PathError with kube's message."""
    out, node = "", schema
    tokens = iter(_tokens(path))
    for tok in tokens:
        if tok == "[":
            if not allow_array_notation:
                raise PathError("array notation is not allowed")
            name = next(tokens, None)
            if name is None:
                raise PathError("unexpected end of JSON path")
            if len(name) < 2 or name[0] != "'" or name[-1] != "'":
                raise PathError(f"expected single quoted string but got {name}")
            key = _unquote(name[1:-1])
            out, node = _step(out, node, key)
            close = next(tokens, None)
            if close is None:
                raise PathError("unexpected end of JSON path")
            if close != "]":
                raise PathError(f"expected ] but got {close}")
        elif tok == ".":
            name = next(tokens, None)
            if name is None:
                raise PathError("unexpected end of JSON path")
            out, node = _step(out, node, name)
        else:
            raise PathError(f"expected [ or . but got: {tok}")
    return out, node


def _step(out: str, node: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    if node.get("properties") is not None:
        prop = node["properties"].get(name)
        if prop is None:
            raise PathError("does not refer to a valid field")
        return (f"{out}.{name}" if out else name), prop
    extra = node.get("additionalProperties")
    if extra is not None:  # field.Path.Key renders [key] without quotes
        return f"{out}[{name}]", extra if isinstance(extra, dict) else {}
    raise PathError("does not refer to a valid field")


def _scalar_key(value: Any) -> bool:
    return isinstance(value, bool | int | float | str)


def _composite_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    out = []
    for key in keys:
        if key not in item or not _scalar_key(item[key]):
            return None
        value = item[key]
        out.append((type(value).__name__, value))
    return tuple(out)


def map_list_get(schema: dict[str, Any], old_items: Any, item: Any) -> Any:
    """The old item with the same list-map keys as ``item`` (first match), else None."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old_items, list):
        return None
    wanted = _composite_key(item, keys)
    if wanted is None:
        return None
    for old in old_items:
        if _composite_key(old, keys) == wanted:
            return old
    return None


def json_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual over JSON values: booleans never equal numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


class Correlation:
    """kube's CorrelatedObject: a new value, its old counterpart, and their schema."""

    def __init__(self, new: Any, old: Any, schema: dict[str, Any] | None) -> None:
        self.new, self.old, self.schema = new, old, schema
        self._equal: bool | None = None

    def unchanged(self) -> bool:
        if self._equal is None:
            self._equal = self._compute()
        return self._equal

    def _compute(self) -> bool:
        new, old = self.new, self.old
        if new is None or old is None:
            return new is None and old is None
        if isinstance(new, list) and isinstance(old, list):
            if len(new) != len(old):
                return False
            is_map_list = (self.schema or {}).get("x-kubernetes-list-type") == "map"
            for i in range(len(new)):
                child = self.index(i)
                if child is None:
                    return False if is_map_list else json_equal(old, new)
                if not child.unchanged():
                    return False
            return True
        if isinstance(new, dict) and isinstance(old, dict):
            if len(new) != len(old):
                return False
            for key in new:
                child = self.key(key)
                if child is None or not child.unchanged():
                    return False
            return True
        if isinstance(new, list | dict) or isinstance(old, list | dict):
            return False
        return json_equal(old, new)

    def key(self, name: str) -> Correlation | None:
        if self.schema is None or not isinstance(self.new, dict) or not isinstance(self.old, dict):
            return None
        if name not in self.new or name not in self.old:
            return None
        props = self.schema.get("properties") or {}
        extra = self.schema.get("additionalProperties")
        if name in props:
            sub = props[name]
        elif isinstance(extra, dict):
            sub = extra
        else:
            return None
        return Correlation(self.new[name], self.old[name], sub)

    def index(self, i: int) -> Correlation | None:
        if self.schema is None or not isinstance(self.new, list) or len(self.new) <= i:
            return None
        old = map_list_get(self.schema, self.old, self.new[i])
        items = self.schema.get("items")
        if old is None or not isinstance(items, dict):
            return None
        return Correlation(self.new[i], old, items)
