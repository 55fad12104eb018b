"""Walking a CRD's ``openAPIV3Schema`` (v1 JSON dict): the questions validation asks of it.

``schema_has`` visits every sub-schema as kube's ``SchemaHas``; ``structural_init_error``
is the reason kube's ``NewStructural`` gives up (from the schema package);
``valid_field_path`` resolves a ``fieldPath``/``jsonPath`` as kube's
``ValidFieldPath``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from platform_api.apiextensions.schema import structural
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

OPENAPI_V3_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _children(s: Obj) -> Iterator[Obj]:
    items = s.get("items")
    if isinstance(items, dict):
        yield items
    elif isinstance(items, list):
        yield from items
    for key in ("allOf", "anyOf", "oneOf"):
        yield from s.get(key) or []
    if isinstance(s.get("not"), dict):
        yield s["not"]
    yield from (s.get("properties") or {}).values()
    for key in ("additionalProperties", "additionalItems"):
        if isinstance(s.get(key), dict):
            yield s[key]
    for key in ("patternProperties", "definitions"):
        yield from (s.get(key) or {}).values()
    for dep in (s.get("dependencies") or {}).values():
        if isinstance(dep, dict):
            yield dep


def schema_has(s: Obj | None, pred: Predicate) -> bool:
    if not isinstance(s, dict):  # a list or scalar where a schema belongs: validation reports it
        return False
    return pred(s) or any(schema_has(child, pred) for child in _children(s))


def has_defaults(s: Obj | None) -> bool:
    return schema_has(s, lambda n: n.get("default") is not None)


def _has_extension(s: Obj) -> bool:
    return bool(
        s.get("x-kubernetes-embedded-resource")
        or s.get("x-kubernetes-preserve-unknown-fields") is not None
        or s.get("x-kubernetes-int-or-string")
        or s.get("x-kubernetes-list-map-keys")
        or s.get("x-kubernetes-list-type") is not None
        or s.get("x-kubernetes-validations")
    )


def has_kubernetes_extensions(s: Obj | None) -> bool:
    return schema_has(s, _has_extension)


def has_invalid_types(s: Obj | None) -> bool:
    return schema_has(s, lambda n: bool(n.get("type")) and n["type"] not in OPENAPI_V3_TYPES)


def _non_atomic_set(s: Obj) -> bool:
    item = s.get("items")
    if s.get("x-kubernetes-list-type") != "set" or not isinstance(item, dict):
        return False
    if item.get("type") == "array":
        return item.get("x-kubernetes-list-type") not in (None, "atomic")
    if item.get("type") == "object":
        return item.get("x-kubernetes-map-type") != "atomic"
    return False


def has_non_atomic_set_type(s: Obj | None) -> bool:
    return schema_has(s, _non_atomic_set)


def has_invalid_map_list_keys_map_set(s: Obj | None) -> bool:
    return schema_has(s, lambda n: bool(validate_map_list_keys_map_set(n, "")))


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def validate_map_list_keys_map_set(s: Obj, path: str) -> list[FieldError]:
    """Keys of a map list are required or defaulted and never nullable; map and set items
    are never nullable."""
    item = s.get("items")
    list_type = s.get("x-kubernetes-list-type")
    if not isinstance(item, dict) or list_type not in ("set", "map"):
        return []
    errs: list[FieldError] = []
    items_path = _join(path, "items")
    if item.get("nullable"):
        errs.append(
            field.forbidden(
                f"{items_path}.nullable",
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type != "map":
        return errs
    required = set(item.get("required") or ())
    properties = item.get("properties") or {}
    for key in s.get("x-kubernetes-list-map-keys") or []:
        prop = properties.get(key)
        if prop is None:
            continue  # reported where list-map-keys are checked
        at = f"{items_path}.properties[{key}]"
        if key not in required and prop.get("default") is None:
            errs.append(
                field.required(
                    f"{at}.default",
                    "this property is in x-kubernetes-list-map-keys, so it must have a default "
                    "or be a required property",
                )
            )
        if prop.get("nullable"):
            errs.append(
                field.forbidden(
                    f"{at}.nullable",
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return errs


# -- NewStructural --------------------------------------------------------------------------


def structural_init_error(s: Obj | None) -> str | None:
    """Why kube's ``NewStructural`` refuses the schema (first reason found), or None."""
    error = structural.structural_init_error(s, "") if s is not None else None
    return None if error is None else error.detail


# -- ValidFieldPath -------------------------------------------------------------------------

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPES |= {"'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = match.group(0)[1]
        if char not in _ESCAPES:
            raise ValueError(f"invalid string literal: invalid escape char {match.group(0)}")
        return _ESCAPES[char]

    return re.sub(r"\\.", one, text)


def _tokens(path: str) -> Iterator[str]:
    """Go's scanner split: ``.``, ``[`` and ``]`` alone, quoted strings whole."""
    i = 0
    while i < len(path):
        if path[i] in ".[]":
            yield path[i]
            i += 1
            continue
        j = i
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            yield path[i : j + 1]
            i = j + 1
            continue
        while j < len(path) and path[j] not in ".[]":
            j += 1
        yield path[i:j]
        i = j


class FieldPath(list[tuple[str, bool]]):
    """Steps of a resolved path: (name, is a map key)."""

    def __str__(self) -> str:
        out = ""
        for name, is_key in self:
            out += f"[{name}]" if is_key else (f".{name}" if out else name)
        return out


def valid_field_path(
    path: str, schema: Obj | None, allow_arrays: bool = True
) -> tuple[FieldPath, Obj | None]:
    """Resolve ``path`` against ``schema``; ValueError with kube's text if it does not."""
    steps = FieldPath()
    tokens = _tokens(path)
    node = schema

    def following() -> str:
        tok = next(tokens, None)
        if tok is None:
            raise ValueError("unexpected end of JSON path")
        return tok

    for tok in tokens:
        if tok == "[":
            if not allow_arrays:
                raise ValueError("array notation is not allowed")
            key = following()
            if len(key) < 2 or key[0] != "'" or key[-1] != "'":
                raise ValueError(f"expected single quoted string but got {key}")
            node = _step(steps, node, _unescape(key[1:-1]))
            close = following()
            if close != "]":
                raise ValueError(f"expected ] but got {close}")
        elif tok == ".":
            node = _step(steps, node, following())
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
    return steps, node


def _step(steps: FieldPath, node: Obj | None, name: str) -> Obj | None:
    if node is None:
        raise ValueError("does not refer to a valid field")
    if node.get("properties"):
        steps.append((name, False))
        if name not in node["properties"]:
            raise ValueError("does not refer to a valid field")
        return node["properties"][name]
    if node.get("additionalProperties") is not None:
        steps.append((name, True))
        extra = node["additionalProperties"]
        return extra if isinstance(extra, dict) else None
    raise ValueError("does not refer to a valid field")
