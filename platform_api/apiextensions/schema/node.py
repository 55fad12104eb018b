"""A structural schema compiled for walking objects: kube's ``schema.Structural``.

A CRD version's ``openAPIV3Schema`` (a JSON dict) is compiled once into a tree of ``Node``
objects that pruning, defaulting, metadata coercion and list-type checks walk. Only the
structure and the vendor extensions live here; value validations (enum, pattern, ...) are
compiled separately by ``openapi.py``. Compiling assumes a schema that passed
``structural_errors``.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.gotext import INT64_MAX, INT64_MIN

Obj = dict[str, Any]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


def json_value(value: Any) -> Any:
    """A schema literal as kube decodes it: integers past int64 become floats."""
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        return float(value)
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_value(v) for v in value]
    return value


class Node:
    """One schema of the structural tree (``Structural``)."""

    __slots__ = (
        "additional",
        "additional_present",
        "clone",
        "deep_defaults",
        "deep_lists",
        "default",
        "defaults_inside",
        "embedded",
        "embedded_inside",
        "int_or_string",
        "items",
        "list_map_keys",
        "list_type",
        "lists_inside",
        "map_type",
        "nullable",
        "preserve_unknown",
        "prop_defaults",
        "properties",
        "raw",
        "type",
    )

    def __init__(self, raw: Obj) -> None:
        self.raw = raw
        self.type: str = raw.get("type") or ""
        self.nullable = bool(raw.get("nullable"))
        default = raw.get("default")
        self.default: Any = MISSING if default is None else json_value(default)
        self.preserve_unknown = raw.get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
        self.int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
        self.list_type: str | None = raw.get("x-kubernetes-list-type")
        self.list_map_keys: list[str] = list(raw.get("x-kubernetes-list-map-keys") or [])
        self.map_type: str | None = raw.get("x-kubernetes-map-type")
        props = raw.get("properties") or {}
        self.properties: dict[str, Node] = {k: Node(v) for k, v in props.items()}
        items = raw.get("items")
        self.items: Node | None = Node(items) if isinstance(items, dict) else None
        additional = raw.get("additionalProperties")
        self.additional_present = additional is not None
        self.additional: Node | None = Node(additional) if isinstance(additional, dict) else None
        # whether defaulting has anything to do in this subtree (most subtrees: nothing)
        children = [*self.properties.values(), self.items, self.additional]
        self.defaults_inside: bool = any(
            c is not None and (c.default is not MISSING or c.defaults_inside) for c in children
        )
        self.embedded_inside: bool = self.embedded or any(
            c is not None and c.embedded_inside for c in children
        )
        self.lists_inside: bool = self.list_type in ("set", "map") or any(
            c is not None and c.lists_inside for c in children
        )
        self.clone: Node | None = None
        # for defaulting: the properties that have a default, those with defaults below
        self.prop_defaults = [
            (k, p.default, p.nullable)
            for k, p in self.properties.items()
            if p.default is not MISSING
        ]
        self.deep_defaults = [(k, p) for k, p in self.properties.items() if p.defaults_inside]
        self.deep_lists = [(k, p) for k, p in self.properties.items() if p.lists_inside]

    def child(self, key: str) -> Node | None:
        """The schema of a field: a property, else the additionalProperties schema."""
        prop = self.properties.get(key)
        if prop is not None:
            return prop
        return self.additional

    def as_embedded(self) -> Node:
        """A shallow copy marked as an embedded resource (kube's ``isResourceRoot``)."""
        if self.embedded:
            return self
        if self.clone is None:
            clone = Node.__new__(Node)
            for slot in Node.__slots__:
                setattr(clone, slot, getattr(self, slot))
            clone.embedded = clone.embedded_inside = True
            self.clone = clone
        return self.clone


EMPTY = Node({})


def compile_structural(schema: Obj | None) -> Node:
    """The structural tree of a CRD version schema (an empty schema when there is none)."""
    return Node(schema) if schema else Node({})
