"""Field paths and sets, and their FieldsV1 encoding.

A path is a tuple of path elements, each kept in its FieldsV1 spelling: ``f:<name>``
for a field, ``k:<json>`` for a list-map item (keys sorted), ``v:<json>`` for a set
item and ``i:<n>`` for an item known only by position.  A set of fields is a plain
Python set of paths: every path in it is owned, which makes union and difference the
set operators.
"""

from __future__ import annotations

from typing import Any

import orjson

Path = tuple[str, ...]
FieldSet = set[Path]

_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def canonical(value: Any) -> str:
    """JSON with sorted keys and no spaces, as Go's encoder writes FieldsV1 keys."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def field(name: str) -> str:
    return "f:" + name


def _value_order(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (3, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (4, canonical(value))


def element_order(element: str) -> tuple[int, Any]:
    """Sibling order of structured-merge-diff: fields, then keys, values, indexes."""
    kind, text = element[0], element[2:]
    if kind == "f":
        return (0, text)
    if kind == "i":
        return (3, int(text))
    value = orjson.loads(text)
    if kind == "k":
        return (1, [(name, _value_order(v)) for name, v in sorted(value.items())])
    return (_RANK.get(kind, 4), _value_order(value))


def iteration_order(path: Path) -> list[tuple[int, tuple[int, Any]]]:
    """Where structured-merge-diff's ``Set.Iterate`` visits ``path``: at each level the
    paths that end there first, then those that go deeper, each by ``element_order``
    (``.spec.schedule`` before ``.spec.ports[name="a"].port``)."""
    last = len(path) - 1
    return [(0 if i == last else 1, element_order(e)) for i, e in enumerate(path)]


def path_string(path: Path) -> str:
    """The path as conflict messages print it: ``.spec.containers[name="a"].image``."""
    parts = []
    for element in path:
        kind, text = element[0], element[2:]
        if kind == "f":
            parts.append("." + text)
        elif kind == "k":
            keys = orjson.loads(text)
            parts.append("[" + ",".join(f"{k}={canonical(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            parts.append(f"[={text}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)


def prefixes(paths: FieldSet) -> set[Path]:
    """Every proper, non-empty prefix of the paths: the nodes with owned descendants."""
    out: set[Path] = set()
    for path in paths:
        for end in range(1, len(path)):
            out.add(path[:end])
    return out


def to_fields_v1(paths: FieldSet) -> dict[str, Any]:
    """Encode a set as FieldsV1: members are ``{}``, or carry ``".": {}`` when they have
    owned children too."""
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        node[None] = True
    return _emit(root, False)


def _emit(node: dict[Any, Any], include_self: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    children = [k for k in node if k is not None]
    if include_self and node.get(None) and children:
        out["."] = {}
    for element in sorted(children, key=element_order):
        out[element] = _emit(node[element], True)
    return out


def _check_element(element: str) -> None:
    """ValueError unless ``element`` decodes as structured-merge-diff decodes path elements:
    ``i:`` an integer, ``v:`` any JSON value, ``k:`` a non-empty JSON object."""
    kind, text = element[0], element[2:]
    if kind == "f":
        return
    if kind == "i":
        if not text.lstrip("-").isascii() or not text.lstrip("-").isdigit():
            raise ValueError(f"invalid path element {element!r}")
        return
    value = orjson.loads(text)  # JSONDecodeError is a ValueError
    if kind == "k" and not (isinstance(value, dict) and value):
        raise ValueError(f"invalid path element {element!r}: expected key value pairs")


def from_fields_v1(fields: Any, prefix: Path = ()) -> FieldSet:
    """Decode FieldsV1; ValueError when it is not a FieldsV1 document."""
    if not isinstance(fields, dict):
        raise ValueError("FieldsV1 must be an object")
    out: FieldSet = set()
    for key, child in fields.items():
        if key == ".":
            if prefix:
                out.add(prefix)
            continue
        if len(key) < 2 or key[1] != ":" or key[0] not in _RANK:
            continue  # SMD drops a path element of a type it does not know, and its children
        _check_element(key)
        path = (*prefix, key)
        if child == {}:
            out.add(path)
        else:
            out |= from_fields_v1(child, path)
    return out
