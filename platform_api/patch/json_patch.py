"""JSON Patch as kube applies it: gopkg.in/evanphx/json-patch.v4, which is more lenient
than RFC 6902, and clients depend on the leniency.

- ``replace`` of a missing object key adds it; an ``add`` without ``value`` adds null;
- array indexes are read as Go's ``strconv.Atoi`` reads them (``+1``, ``007``), and
  negative ones count from the end;
- a pointer's ``~1``/``~0`` are unescaped and any other ``~`` is kept as it is;
- a null body is an empty patch.

What cannot apply raises JSONPatchError with the library's own words: the patch endpoint
answers it with kube's bare 422, a mutating webhook's patch with an internal error.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson

from platform_api import errors
from platform_api.gotext import json_kind

MAX_OPERATIONS = 10000
_FIELDS = ("op", "path", "from")  # the string fields of kube's jsonPatchOp


class JSONPatchError(ValueError):
    """An operation that does not apply (evanphx's error text)."""


def decode(patch: Any) -> list[dict[str, Any]]:
    """``jsonpatch.DecodePatch``: a list of operations (a null element is an empty one)."""
    if patch is None:
        return []
    if not isinstance(patch, list):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(patch)} into Go value of type jsonpatch.Patch"
        )
    for i, op in enumerate(patch):
        if op is not None and not isinstance(op, dict):
            raise errors.bad_request(
                f"json: cannot unmarshal {json_kind(op)} into Patch.{i} of type jsonpatch.Operation"
            )
    if len(patch) > MAX_OPERATIONS:
        raise errors.request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(patch)}"
        )
    return [op or {} for op in patch]


def check_operations(patch: Any, duplicates: dict[int, list[tuple[str, int]]]) -> list[str]:
    """kube's strict decoding of a JSON patch into ``[]jsonPatchOp`` (fieldValidation Warn
    or Strict): a type mismatch is a 400, unknown and duplicate fields are returned."""
    if patch is None:
        return []
    if not isinstance(patch, list):
        raise _op_error(f"{json_kind(patch)} into Go value of type []handlers.jsonPatchOp")
    problems: list[tuple[int, float, str]] = []  # (op, where in the op, problem)
    for i, op in enumerate(patch):
        if op is None:
            continue
        if not isinstance(op, dict):
            raise _op_error(f"{json_kind(op)} into Go value of type handlers.jsonPatchOp")
        for at, (key, value) in enumerate(op.items()):
            if key in _FIELDS and value is not None and not isinstance(value, str):
                kind = json_kind(value)
                raise _op_error(f"{kind} into Go struct field jsonPatchOp.{key} of type string")
            if key not in _FIELDS and key != "value":
                problems.append((i, at, f'json patch unknown field "[{i}].{key}"'))
        # a repeat stands after the distinct keys before it, so before the next one
        for key, seen in duplicates.get(id(op), ()):
            problems.append((i, seen - 0.5, f'json patch duplicate field "[{i}].{key}"'))
    return [problem for *_, problem in sorted(problems)]


def _op_error(what: str) -> errors.StatusError:
    return errors.bad_request(f"error decoding patch: json: cannot unmarshal {what}")


class _Root:
    """The document being patched (boxed: replacing it whole is an assignment), and the
    objects evanphx decoded on the way (by id, kept alive so no id is reused)."""

    __slots__ = ("decoded", "value")

    def __init__(self, value: Any, decoded: dict[int, Any]) -> None:
        self.value, self.decoded = value, decoded

    def mark(self, node: Any) -> None:
        self.decoded[id(node)] = node


def apply(doc: Any, operations: list[dict[str, Any]], decoded: dict[int, Any] | None = None) -> Any:
    """The patched document (``doc`` is changed in place); JSONPatchError if an
    operation does not apply.  ``decoded`` collects the containers the library decodes
    on the way (the ones it writes back as Go maps: ``as_written``)."""
    root = _Root(doc, {} if decoded is None else decoded)
    for op in operations:
        kind = op.get("op")
        handler = _OPERATIONS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise JSONPatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        handler(root, op)
    return root.value


def _path(op: dict[str, Any], field: str, verb: str) -> str:
    value = op.get(field)
    if not isinstance(value, str):
        raise JSONPatchError(f"{verb} operation failed to decode {field}: missing value")
    return value


def _value(op: dict[str, Any]) -> Any:
    """The operation's value (null when absent), copied: a retried patch applies the
    same operations again."""
    value = op.get("value")
    return copy.deepcopy(value) if isinstance(value, dict | list) else value


_ESCAPE = re.compile("~[01]")


def _unescape(token: str) -> str:
    return (
        _ESCAPE.sub(lambda m: "/" if m.group() == "~1" else "~", token) if "~" in token else token
    )


def _find(root: _Root, path: str) -> tuple[Any, str] | None:
    """evanphx's findObject: the container holding the pointer's last token, and that
    token unescaped; None where the path does not lead to a container."""
    parts = path.split("/")
    if len(parts) < 2:
        return None
    node = root.value
    root.mark(node)
    for part in parts[1:-1]:
        node = _child(node, _unescape(part))
        if not isinstance(node, dict | list):
            return None
        root.mark(node)
    return node, _unescape(parts[-1])


def _child(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    try:
        return node[_index(node, key, len(node) - 1)]
    except JSONPatchError:
        return None


_ATOI = re.compile(r"[+-]?[0-9]+\Z")


def _index(array: list[Any], key: str, last: int) -> int:
    """An index as Go's Atoi reads it, negative counting from the end, at most ``last``."""
    if not _ATOI.match(key) or len(key.lstrip("+-")) > 18:
        raise JSONPatchError(f"value was not a proper array index: '{key}'")
    index = int(key)
    if index > last or index < -(last + 1):
        raise JSONPatchError(f"Unable to access invalid index: {index}: invalid index referenced")
    return index + last + 1 if index < 0 else index


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    return container[_index(container, key, len(container) - 1)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_index(container, key, len(container)), value)


def _remove(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}: missing value")
        return container.pop(key)
    return container.pop(_index(container, key, len(container) - 1))


def _located(root: _Root, op: dict[str, Any], verb: str, field: str = "path") -> tuple[Any, str]:
    path = _path(op, field, verb)
    found = _find(root, path)
    if found is None:
        what = "from path" if field == "from" else "path"
        raise JSONPatchError(f'{verb} operation does not apply: doc is missing {what}: "{path}"')
    return found


def _op_add(root: _Root, op: dict[str, Any]) -> None:
    container, key = _located(root, op, "add")
    _add(container, key, _value(op))


def _op_remove(root: _Root, op: dict[str, Any]) -> None:
    container, key = _located(root, op, "remove")
    _remove(container, key)


def _op_replace(root: _Root, op: dict[str, Any]) -> None:
    if op.get("path") == "":
        value = _value(op)
        if not isinstance(value, dict | list):
            raise JSONPatchError("replace operation value must be object or array")
        root.value = value
        return
    container, key = _located(root, op, "replace")
    if isinstance(container, dict):
        container[key] = _value(op)
    else:
        container[_index(container, key, len(container) - 1)] = _value(op)


def _op_move(root: _Root, op: dict[str, Any]) -> None:
    container, key = _located(root, op, "move", "from")
    value = _remove(container, key)
    target, name = _located(root, op, "move")
    _add(target, name, value)


def _op_copy(root: _Root, op: dict[str, Any]) -> None:
    container, key = _located(root, op, "copy", "from")
    source = _get(container, key)
    # evanphx copies once the destination is found: a path through the source has
    # decoded it by then, and the copy is written as a Go map
    target, name = _located(root, op, "copy")
    _add(target, name, _copied(source, root))


def _op_test(root: _Root, op: dict[str, Any]) -> None:
    path = _path(op, "path", "test")
    if path == "":
        current = root.value
    else:
        found = _find(root, path)
        if found is None:
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}")
        current = _get(*found)
    if not _same(current, op.get("value")):
        raise JSONPatchError(f"testing value {path} failed: test failed")
    _mark_all(current, root)  # comparing decoded every object of it


def _copied(value: Any, root: _Root) -> Any:
    """evanphx's deepCopy: the value written out and read back, so a copy is written as
    its source was (Go maps where the source was decoded) and is raw itself."""
    if isinstance(value, dict):
        keys = sorted(value) if id(value) in root.decoded else value
        return {k: _copied(value[k], root) for k in keys}
    if isinstance(value, list):
        return [_copied(v, root) for v in value]
    return value


def _mark_all(value: Any, root: _Root) -> None:
    if isinstance(value, dict | list):
        root.mark(value)
        for child in value.values() if isinstance(value, dict) else value:
            _mark_all(child, root)


def _same(a: Any, b: Any) -> bool:
    """evanphx compares objects and arrays by structure and scalars by their JSON text,
    so ``1`` is not ``1.0``; a missing value and null are the same."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(orjson.dumps(a) == orjson.dumps(b))


_OPERATIONS = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move,
    "copy": _op_copy,
    "test": _op_test,
}


def as_written(doc: Any, decoded: dict[int, Any]) -> Any:
    """``doc`` with its keys in the order kube's json-patch library writes a patched
    document, which a refusal quotes: the objects it decoded on the way (``apply``'s
    ``decoded``: those an operation's pointers passed through, wherever they moved
    since) as Go maps (sorted keys), the rest raw as stored or as the patch wrote them."""
    if isinstance(doc, list):
        return [as_written(v, decoded) for v in doc]
    if not isinstance(doc, dict) or id(doc) not in decoded:
        return doc
    return {k: as_written(doc[k], decoded) for k in sorted(doc)}
