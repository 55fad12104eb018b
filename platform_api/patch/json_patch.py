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
from platform_api.gotext import json_kind, quote

MAX_OPERATIONS = 10000
_FIELDS = ("op", "path", "from")  # the string fields of kube's jsonPatchOp


class JSONPatchError(ValueError):
    """An operation that does not apply (evanphx's error text)."""


class TestFailed(JSONPatchError):
    """A ``test`` whose value differs (evanphx's ErrTestFailed: a mutating policy's patch
    is then not applied, and no error)."""


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


_MISSING = "missing value"  # evanphx's ErrMissing


def _pointer(op: dict[str, Any], field: str) -> str:
    """Operation.Path / Operation.From: the pointer, or their error."""
    value = op.get(field)
    if value is None:
        missing = (
            "operation missing path field" if field == "path" else "operation, missing from field"
        )
        raise JSONPatchError(f"{missing}: {_MISSING}")
    if not isinstance(value, str):
        raise JSONPatchError(
            f"json: cannot unmarshal {json_kind(value)} into Go value of type string"
        )
    return value


def _decoded(op: dict[str, Any], field: str, verb: str, wrap: bool = True) -> str:
    """The pointer; without ``wrap`` the operation words a failure as missing whatever
    it was (evanphx's add, remove and copy's destination)."""
    try:
        return _pointer(op, field)
    except JSONPatchError as e:
        why = str(e) if wrap else _MISSING
        raise JSONPatchError(f"{verb} operation failed to decode {field}: {why}") from None


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
        return node[_get_index(node, key)]
    except JSONPatchError:
        return None


_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _atoi(key: str) -> int:
    """Go's strconv.Atoi, with its error text."""
    if not _ATOI.match(key):
        raise JSONPatchError(f"strconv.Atoi: parsing {quote(key)}: invalid syntax")
    index = int(key)
    if not _INT64[0] <= index <= _INT64[1]:
        raise JSONPatchError(f"strconv.Atoi: parsing {quote(key)}: value out of range")
    return index


def _invalid_index(index: int) -> JSONPatchError:
    return JSONPatchError(f"Unable to access invalid index: {index}: invalid index referenced")


def _get_index(array: list[Any], key: str) -> int:
    """partialArray.get's position (and set's): negative counts from the end."""
    index = _atoi(key)
    if index < 0:
        if index < -len(array):
            raise _invalid_index(index)
        index += len(array)
    if index >= len(array):
        raise _invalid_index(index)
    return index


def _add_index(array: list[Any], key: str) -> int:
    """partialArray.add's position: up to one past the end."""
    try:
        index = _atoi(key)
    except JSONPatchError as e:
        raise JSONPatchError(f"value was not a proper array index: '{key}': {e}") from None
    size = len(array) + 1
    if index >= size:
        raise _invalid_index(index)
    if index < 0:
        if index < -size:
            raise _invalid_index(index)
        index += size
    return index


def _remove_index(array: list[Any], key: str) -> int:
    index = _atoi(key)
    if index >= len(array):
        raise _invalid_index(index)
    if index < 0:
        if index < -len(array):
            raise _invalid_index(index)
        index += len(array)
    return index


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    return container[_get_index(container, key)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_add_index(container, key), value)


def _remove(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}: {_MISSING}")
        return container.pop(key)
    return container.pop(_remove_index(container, key))


def _located(root: _Root, path: str, refusal: str) -> tuple[Any, str]:
    found = _find(root, path)
    if found is None:
        raise JSONPatchError(f"{refusal}: {_MISSING}")
    return found


def _wrapped(prefix: str, step: Any, *args: Any) -> Any:
    try:
        return step(*args)
    except JSONPatchError as e:
        raise JSONPatchError(f"{prefix}: {e}") from None


def _op_add(root: _Root, op: dict[str, Any]) -> None:
    path = _decoded(op, "path", "add", wrap=False)
    container, key = _located(
        root, path, f'add operation does not apply: doc is missing path: "{path}"'
    )
    _wrapped(f"error in add for path: '{path}'", _add, container, key, _value(op))


def _op_remove(root: _Root, op: dict[str, Any]) -> None:
    path = _decoded(op, "path", "remove", wrap=False)
    refusal = f'remove operation does not apply: doc is missing path: "{path}"'
    container, key = _located(root, path, refusal)
    _wrapped(f"error in remove for path: '{path}'", _remove, container, key)


def _op_replace(root: _Root, op: dict[str, Any]) -> None:
    path = _decoded(op, "path", "replace")
    if path == "":
        value = _value(op)
        if not isinstance(value, dict | list):
            # Go's %w of the nil error evanphx passes
            raise JSONPatchError("replace operation value must be object or array: %!w(<nil>)")
        root.value = value
        return
    refusal = f"replace operation does not apply: doc is missing path: {path}"
    container, key = _located(root, path, refusal)
    if isinstance(container, dict):
        container[key] = _value(op)
        return
    try:
        index = _get_index(container, key)
    except JSONPatchError:
        raise JSONPatchError(
            f"replace operation does not apply: doc is missing key: {path}: {_MISSING}"
        ) from None
    container[index] = _value(op)


def _op_move(root: _Root, op: dict[str, Any]) -> None:
    source = _decoded(op, "from", "move")
    refusal = f"move operation does not apply: doc is missing from path: {source}"
    container, key = _located(root, source, refusal)
    _wrapped(f"error in move for path: '{key}'", _get, container, key)
    value = _wrapped(f"error in move for path: '{key}'", _remove, container, key)
    path = _decoded(op, "path", "move")
    refusal = f"move operation does not apply: doc is missing destination path: {path}"
    target, name = _located(root, path, refusal)
    _wrapped(f"error in move for path: '{path}'", _add, target, name, value)


def _op_copy(root: _Root, op: dict[str, Any]) -> None:
    source = _decoded(op, "from", "copy")
    refusal = f"copy operation does not apply: doc is missing from path: {source}"
    container, key = _located(root, source, refusal)
    value = _wrapped(f"error in copy for from: '{source}'", _get, container, key)
    path = _decoded(op, "path", "copy", wrap=False)
    refusal = f"copy operation does not apply: doc is missing destination path: {path}"
    # evanphx copies once the destination is found: a path through the source has
    # decoded it by then, and the copy is written as a Go map
    target, name = _located(root, path, refusal)
    _wrapped("error while adding value during copy", _add, target, name, _copied(value, root))


def _op_test(root: _Root, op: dict[str, Any]) -> None:
    path = _decoded(op, "path", "test")
    if path == "":
        current = root.value
    else:
        container, key = _located(
            root, path, f"test operation does not apply: is missing path: {path}"
        )
        current = _wrapped(f"error in test for path: '{path}'", _get, container, key)
    if not _same(current, op.get("value")):
        raise TestFailed(f"testing value {path} failed: test failed")
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
