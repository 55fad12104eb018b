"""Where a built-in kind holds Go ``[]byte`` fields (``format: byte`` in its schema).

JSON shows such a field as base64 text, as stored here; CBOR carries the raw bytes
(tag 22), which a typed Go client reads straight into its ``[]byte``.  The encoder
needs to know where they are, and only a handful of kinds have any.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from platform_api.scheme.schemas import Node, load_schemas

# field -> subtree; True marks a []byte value, "*" every value of a map; lists are
# transparent (the subtree applies to each element).
Tree = dict[str, Any]


@cache
def byte_fields(definition: str) -> Tree | None:
    """The tree of a built-in definition, None when no []byte field is below it."""
    schemas = load_schemas()
    if definition not in schemas.definitions:
        return None
    found = _walk(schemas.get(definition), frozenset({definition}))
    return found if isinstance(found, dict) else None


def _walk(node: Node, seen: frozenset[str]) -> Tree | bool | None:
    schemas = load_schemas()
    ref, node = schemas.resolve(node)
    if ref:
        if ref in seen:  # recursive types (JSONSchemaProps) hold no bytes of their own
            return None
        seen = seen | {ref}
    if node.get("type") == "string":
        return True if node.get("format") == "byte" else None
    if "items" in node:
        return _walk(node["items"], seen)
    tree: Tree = {}
    for name, child in node.get("properties", {}).items():
        below = _walk(child, seen)
        if below is not None:
            tree[name] = below
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        below = _walk(extra, seen)
        if below is not None:
            tree["*"] = below
    return tree or None


@cache
def for_kind(api_version: str, kind: str) -> Tree | None:
    """The tree of a built-in kind by its (branded) apiVersion; None for custom kinds,
    which kube treats as unstructured: their strings stay strings."""
    group, _, version = api_version.rpartition("/")
    try:
        definition = load_schemas().for_kind(group, version, kind)
    except KeyError:
        return None
    return byte_fields(definition)


def for_object(obj: dict[str, Any]) -> Tree | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return for_kind(api_version, kind)
