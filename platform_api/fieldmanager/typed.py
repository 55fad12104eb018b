"""List and map semantics of a value, read from the OpenAPI schemas.

Each node of an object is a leaf (scalars, and atomic maps, structs and lists), a
struct (declared fields), a granular map (``additionalProperties``), or a list of
kind ``set`` or ``map`` (``x-kubernetes-list-type``; without one, a list patched by
merge key acts as a map keyed by it).  Parts without a schema are deduced from the
value as structured-merge-diff does: objects are granular maps, lists are atomic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from platform_api.codec import protobuf_schema
from platform_api.fieldmanager.fieldpath import canonical
from platform_api.scheme.schemas import Node, Schemas

LEAF, STRUCT, MAP, SET, KEYED, INDEXED = "leaf", "struct", "map", "set", "keyed", "indexed"

# Key fields the schemas default (kube's list-map key defaults), for items that omit them.
KEY_DEFAULTS = {"protocol": "TCP"}
_ZEROS: dict[Any, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}


@cache
def _zero_fields(definition: str) -> frozenset[str]:
    """The JSON fields a zero Go value of a built-in definition serializes, from the
    generated Protobuf field table (which keeps each Go field's pointer and omitempty)."""
    message = protobuf_schema.message_of_definition(definition)
    if message is None:
        return frozenset()
    fields = protobuf_schema.fields(message)
    out = set()
    for f in fields:
        if f.flags & protobuf_schema.INLINE:
            continue
        value_struct = f.kind == "message" and not f.flags & (
            protobuf_schema.POINTER | protobuf_schema.REPEATED | protobuf_schema.OMITZERO
        )
        if value_struct or not f.flags & protobuf_schema.OMITEMPTY:
            out.add(f.json)
    return frozenset(out)


@dataclass(frozen=True)
class Shape:
    kind: str
    node: Node  # the resolved schema node
    keys: tuple[str, ...] = ()


_EMPTY: Node = {}
_A_LIST: list[Any] = []
_A_MAP: dict[str, Any] = {}


class Typed:
    """Schema navigation for the field manager's walks."""

    def __init__(self, schemas: Schemas | None, unstructured: bool = False) -> None:
        self.schemas = schemas
        # A custom resource's values stay JSON, where null is a value an apply sets; a
        # built-in kind's become Go values, where it is a field's absence.
        self.unstructured = unstructured
        # Shapes by (schema node identity, value category): schema nodes live as long
        # as the schemas, and the walks ask for the same few thousand again and again.
        self._shapes: dict[tuple[int, int], Shape] = {}
        self._definitions: dict[int, str] | None = None  # resolved node -> its name
        self._key_defaults: dict[int, dict[str, Any]] = {}  # by the (cached) shape's id
        # Declared shapes of path elements, by (the cached parent shape's id, field name
        # or "" for a list item): a field path is read against the schema on each write.
        self._children: dict[tuple[int, str], Shape | None] = {}

    def zero_present(self, shape: Shape, element: str) -> bool:
        """Whether the Go struct behind ``shape`` always serializes field ``element``
        (no ``omitempty``, or a struct held by value).  kube compares against Go objects,
        so such a field is never "added" by a write, only its contents: managedFields
        have no ``.`` for it (``containers``, ``spec``), unlike a field an empty object
        lacks (a ConfigMap's ``data``, anything of a custom resource)."""
        if shape.kind != STRUCT or self.schemas is None or not element.startswith("f:"):
            return False
        if self._definitions is None:
            self._definitions = {id(n): name for name, n in self.schemas.definitions.items()}
        name = self._definitions.get(id(shape.node))
        return name is not None and element[2:] in _zero_fields(name)

    def declares(self, node: Node) -> bool:
        """Whether the schema gives the field a container type of its own (a null there is
        an empty list or map to structured-merge-diff, not a scalar of a deduced type)."""
        target = self._resolve(node)
        return target.get("type") in ("object", "array") or "properties" in target

    def declared_shape(self, node: Node) -> Shape | None:
        """The shape the schema alone gives a field (a list or a map of some kind), for
        field paths without their value; None for scalars and untyped fields."""
        target = self._resolve(node)
        declared = target.get("type")
        if declared == "array":
            return self.shape(node, _A_LIST)
        if declared == "object" or "properties" in target:
            return self.shape(node, _A_MAP)
        return None

    def declared_child(self, parent: Shape, element: str) -> Shape | None:
        """The declared shape of a path element under ``parent``: a field of a struct or
        map, an item of a list; None where the schema gives none (an undeclared field,
        a scalar, an element of the wrong kind, anything under an atomic field)."""
        field = element.startswith("f:")
        key = (id(parent), element[2:] if field else "")
        if key in self._children:
            return self._children[key]
        found: Shape | None = None
        if field and parent.kind in (STRUCT, MAP):
            found = self.declared_shape(self.field(parent, element[2:])[0])
        elif not field and parent.kind in (SET, KEYED, INDEXED):
            found = self.declared_shape(self.items(parent))
        self._children[key] = found
        return found

    def _resolve(self, node: Node) -> Node:
        if not node or self.schemas is None:
            return node
        return self.schemas.resolve(node)[1]

    def shape(self, node: Node, value: Any) -> Shape:
        category = 0 if isinstance(value, dict) else 1 if isinstance(value, list) else 2
        key = (id(node), category)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = self._shape(node, value)
        return shape

    def _shape(self, node: Node, value: Any) -> Shape:
        target = self._resolve(node)
        if isinstance(value, dict):
            if "atomic" in (node.get("x-kubernetes-map-type"), target.get("x-kubernetes-map-type")):
                return Shape(LEAF, target)
            if "properties" in target:
                return Shape(STRUCT, target)
            return Shape(MAP, target)
        if isinstance(value, list):
            return self._list_shape(node, target)
        return Shape(LEAF, target)

    def _list_shape(self, node: Node, target: Node) -> Shape:
        list_type = node.get("x-kubernetes-list-type") or target.get("x-kubernetes-list-type")
        if list_type == "set":
            return Shape(SET, target)
        if list_type == "map":
            keys = node.get("x-kubernetes-list-map-keys") or target.get(
                "x-kubernetes-list-map-keys"
            )
            return Shape(KEYED, target, tuple(keys or ())) if keys else Shape(INDEXED, target)
        strategy = node.get("x-kubernetes-patch-strategy", "")
        merge_key = node.get("x-kubernetes-patch-merge-key")
        if list_type is None and merge_key and "merge" in strategy.split(","):
            return Shape(KEYED, target, (merge_key,))
        return Shape(LEAF, target)

    @staticmethod
    def field(shape: Shape, name: str) -> tuple[Node, bool]:
        """The schema of a field and whether it is a declared (named) struct field."""
        props = shape.node.get("properties")
        if props is not None and name in props:
            return props[name], True
        extra = shape.node.get("additionalProperties")
        return (extra if isinstance(extra, dict) else _EMPTY), False

    @staticmethod
    def items(shape: Shape) -> Node:
        items = shape.node.get("items")
        return items if isinstance(items, dict) else _EMPTY

    def item_element(self, shape: Shape, item: Any, index: int) -> str:
        if shape.kind == SET:
            return "v:" + canonical(item)
        if shape.kind == KEYED and isinstance(item, dict):
            defaults = self.key_defaults(shape)
            key = {}
            for name in shape.keys:
                if name in item:
                    key[name] = item[name]
                elif name in defaults:
                    key[name] = defaults[name]
            return "k:" + canonical(key)
        return f"i:{index}"

    def key_defaults(self, shape: Shape) -> dict[str, Any]:
        """The defaults of a keyed list's key fields, which structured-merge-diff puts in
        an item's key when it omits them: the schema's ``default`` (a CRD's), else, for a
        built-in kind, the zero value of a field Go always serializes (kube's OpenAPI
        gives those a default), else kube's ``+default`` markers (``KEY_DEFAULTS``)."""
        cached = self._key_defaults.get(id(shape))
        if cached is not None:
            return cached
        item = self._resolve(self.items(shape))
        props = item.get("properties") or {}
        if self._definitions is None and self.schemas is not None:
            self._definitions = {id(n): name for name, n in self.schemas.definitions.items()}
        definition = (self._definitions or {}).get(id(item))
        zero = _zero_fields(definition) if definition else frozenset()
        out: dict[str, Any] = {}
        for name in shape.keys:
            node = props.get(name) or {}
            if "default" in node:
                out[name] = node["default"]
            elif name in KEY_DEFAULTS:
                out[name] = KEY_DEFAULTS[name]
            elif name in zero:
                out[name] = _ZEROS.get(node.get("type"), "")
        self._key_defaults[id(shape)] = out
        return out

    def children(self, shape: Shape, value: Any) -> dict[str, tuple[Node, Any, bool]]:
        """The child elements of a composite value: element -> (schema, value, named)."""
        out: dict[str, tuple[Node, Any, bool]] = {}
        if shape.kind in (STRUCT, MAP):
            if isinstance(value, dict):
                for name, child in value.items():
                    node, named = self.field(shape, name)
                    out["f:" + name] = (node, child, named)
        elif isinstance(value, list):
            items = self.items(shape)
            for index, item in enumerate(value):
                out[self.item_element(shape, item, index)] = (items, item, False)
        return out
