"""The schemas of the OpenAPI documents: which definitions a document's paths need, and
each as the v2 or v3 document writes it (a custom kind's published form, references
under the document's own prefix, the few kube writes its own way)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from platform_api.apiserver.openapipaths import PREFIX
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.schemas import INT_OR_STRING, QUANTITY, Node

# A reference in paths, found in their JSON (walking the dicts took ~0.1 s of a v2 build).
_SCHEMA_REF = re.compile(rb'"\$ref":"' + re.escape(PREFIX.encode()) + rb'([^"]+)"')


def named(paths: dict[str, Any]) -> list[str]:
    """The definitions ``paths`` (v3) refer to."""
    return [name.decode() for name in _SCHEMA_REF.findall(orjson.dumps(paths))]


def _convert(node: Any, prefix: str, v2: bool) -> Any:
    """A normalized schema node in OpenAPI v2 or v3 form."""
    if isinstance(node, list):
        return [_convert(item, prefix, v2) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = {"$ref": prefix + node["$ref"]}
        rest = {k: v for k, v in node.items() if k != "$ref"}
        if not rest:
            return ref
        siblings = {k: _convert(v, prefix, v2) for k, v in rest.items()}
        # kube's v2 keeps a reference's description beside it; v3 wraps it in allOf.
        return {**ref, **siblings} if v2 else {"allOf": [ref], **siblings}
    out = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties"):
            out[key] = {p: _convert(s, prefix, v2) for p, s in value.items()}
        else:
            out[key] = _convert(value, prefix, v2)
    return out


def _definition(name: str, node: Node, prefix: str, v2: bool) -> Any:
    if name == INT_OR_STRING:
        return {
            "type": "string",
            "format": "int-or-string",
            "description": node.get(
                "description", "IntOrString is a type that can hold an int32 or a string."
            ),
        }
    if name == QUANTITY and v2:
        return {"type": "string", "description": node.get("description", "")}
    return _convert(node, prefix, v2)


def _shown(scheme: Scheme, name: str, v2: bool) -> Node:
    """A definition as the documents show it (a custom kind's published form)."""
    published = scheme.schemas.published.get(name)
    if published is not None:
        return published[1] if v2 else published[0]
    return scheme.schemas.definitions[name]


def _reachable(scheme: Scheme, roots: list[str], v2: bool) -> list[str]:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in scheme.schemas.definitions:
            continue
        seen.add(name)
        stack.extend(_refs(_shown(scheme, name, v2)))
    return sorted(seen)


def _refs(node: Any) -> list[str]:
    """Definition names a schema node refers to (a ``properties`` map is names to
    schemas: JSONSchemaProps has a property called ``$ref``)."""
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    for key, value in node.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            found.extend(r for schema in value.values() for r in _refs(schema))
        elif key != "$ref":
            found.extend(_refs(value))
    return found


def regroup(node: Any, group: str, name: str) -> Any:
    """A definition whose group-version-kinds name ``name`` instead of ``group``."""
    kinds = node.get("x-kubernetes-group-version-kind") if isinstance(node, dict) else None
    if not kinds:
        return node
    renamed = [{**k, "group": name} if k.get("group") == group else k for k in kinds]
    return {**node, "x-kubernetes-group-version-kind": renamed}


def definitions(scheme: Scheme, roots: list[str], v2: bool) -> dict[str, Any]:
    """The definitions ``roots`` need, as the v2 or v3 documents show them, by name."""
    prefix = "#/definitions/" if v2 else PREFIX
    return {
        name: _definition(name, _shown(scheme, name, v2), prefix, v2)
        for name in _reachable(scheme, roots, v2)
    }
