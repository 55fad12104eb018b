"""A custom kind's schema as kube's OpenAPI controllers publish it, in v3 and in v2.

The served types keep the CRD's schema (crd.definitions): typing, decoding and field
management read it.  The documents at /openapi/v3 and /openapi/v2 show more and less,
as kube's CRD OpenAPI builder does:

- both: TypeMeta and ObjectMeta at the root, ``x-kubernetes-int-or-string`` unfolded
  into ``anyOf: [integer, string]``, an embedded resource's apiVersion, kind and metadata
  (both required but metadata), and the version's selectable fields;
- v2 only: junctors (allOf, anyOf, oneOf, not) dropped, a nullable node left untyped
  with its children, a node preserving unknown fields without children (and untyped if an
  object), an array without items untyped, nullable properties not required; a root
  preserving unknown fields is ``type: object`` alone, so kubectl's v2 validation lets
  anything through.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from platform_api.scheme.schemas import OBJECT_META, Node

Obj = dict[str, Any]
PRESERVE = "x-kubernetes-preserve-unknown-fields"
_DOCS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
METADATA = {
    "$ref": OBJECT_META,
    "description": f"Standard object's metadata. More info: {_DOCS}#metadata",
}
TYPE_META = {
    "apiVersion": {
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object. Servers should convert recognized schemas to the latest internal value, and "
        f"may reject unrecognized values. More info: {_DOCS}#resources",
        "type": "string",
    },
    "kind": {
        "description": "Kind is a string value representing the REST resource this object "
        "represents. Servers may infer this from the endpoint the client submits requests to. "
        f"Cannot be updated. In CamelCase. More info: {_DOCS}#types-kinds",
        "type": "string",
    },
}
_EMBEDDED_TYPE_META = {
    "apiVersion": {
        "description": "apiVersion defines the versioned schema of this representation of an "
        f"object. More info: {_DOCS}#resources",
        "type": "string",
    },
    "kind": {
        "description": "kind is a string value representing the type of this object. In "
        f"CamelCase. More info: {_DOCS}#types-kinds",
        "type": "string",
    },
}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")


def kind_documents(schema: Obj | None, extensions: Obj) -> tuple[Node, Node]:
    """The kind's (v3, v2) definitions; ``extensions`` are its group-version-kind and
    selectable fields."""
    return _document(schema, extensions, v2=False), _document(schema, extensions, v2=True)


def selectable_fields(version: Obj) -> list[Obj]:
    """``x-kubernetes-selectable-fields``: each field's path without its leading dot."""
    return [
        {"fieldPath": field.get("jsonPath", "").removeprefix(".")}
        for field in version.get("selectableFields") or ()
    ]


def _document(schema: Obj | None, extensions: Obj, v2: bool) -> Node:
    if schema is None or (v2 and schema.get(PRESERVE)):
        return {"type": "object", **extensions}
    node = copy.deepcopy(schema)
    _unfold(node)
    if v2:
        _to_v2(node)
    props = node.setdefault("properties", {})
    props["metadata"] = dict(METADATA)
    props.update(copy.deepcopy(TYPE_META))
    _embed(node, v2)
    return {**node, **extensions}


def _children(node: Obj) -> Iterator[Obj]:
    for child in (node.get("properties") or {}).values():
        if isinstance(child, dict):
            yield child
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield node[key]


def _unfold(node: Obj) -> None:
    """``x-kubernetes-int-or-string`` spelled out as kube's schema.Unfold does."""
    if node.get("x-kubernetes-int-or-string") and not _unfolded(node):
        if "anyOf" not in node:
            node["anyOf"] = copy.deepcopy(_INT_OR_STRING)
        else:
            node["allOf"] = [{"anyOf": copy.deepcopy(_INT_OR_STRING)}, *node.get("allOf", [])]
    for child in _children(node):
        _unfold(child)


def _unfolded(node: Obj) -> bool:
    if node.get("anyOf") == _INT_OR_STRING:
        return True
    all_of = node.get("allOf") or []
    return bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING


def _to_v2(node: Obj) -> None:
    """kube's ToStructuralOpenAPIV2, on one node and then on the children it keeps."""
    for junctor in _JUNCTORS:
        node.pop(junctor, None)
    if node.pop("nullable", False):
        for key in ("type", "items", "properties"):
            node.pop(key, None)
    if node.get(PRESERVE):
        node.pop("items", None)
        node.pop("properties", None)
        if node.get("type") == "object":
            del node["type"]
    if "items" not in node and node.get("type") == "array":
        del node["type"]
    required = node.get("required")
    if required:
        props = node.get("properties") or {}
        kept = [f for f in required if not (props.get(f) or {}).get("nullable")]
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("nullable"):
            kept = []
        if kept:
            node["required"] = kept
        else:
            del node["required"]
    for child in _children(node):
        _to_v2(child)


def _embed(node: Obj, v2: bool) -> None:
    """An embedded resource's TypeMeta and metadata (kube's addEmbeddedProperties);
    v2 leaves them out where unknown fields are kept, or kubectl would refuse those."""
    for child in _children(node):
        _embed(child, v2)
    if v2 and node.get(PRESERVE):
        return
    if node.get("x-kubernetes-embedded-resource"):
        props = node.setdefault("properties", {})
        props.update(copy.deepcopy(_EMBEDDED_TYPE_META))
        props["metadata"] = dict(METADATA)
        required = node.setdefault("required", [])
        required += [f for f in ("kind", "apiVersion") if f not in required]
