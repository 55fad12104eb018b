"""Where a strategic merge patch finds each field's strategy: kube's PatchMetaFromStruct.

kube looks fields up on the Go type (``forkedjson.LookupPatchMetadataForStruct``), which
both gives a field's ``patchStrategy`` and ``patchMergeKey`` tags and refuses lookups
the type cannot answer, each a plain 500 in its own words: a key the struct lacks, any
key of a map-typed field (``labels`` holding a ``$setElementOrder/x``), an element order
for a field that is no list.  Here the tags come from the OpenAPI definitions'
``x-kubernetes-patch-*`` markers and the Go kind of a field (struct, pointer, map) from
the Protobuf field table, which knows Go's pointers.
"""

from __future__ import annotations

import functools

from platform_api.codec.protobuf_schema import UnknownMessage, fields, message_of_definition
from platform_api.scheme.schemas import Node, Schemas


class PatchError(ValueError):
    """A patch kube refuses; ``kind`` is how interpretStrategicMergePatchError sorts it."""

    def __init__(self, message: str, kind: str = "Internal") -> None:
        super().__init__(message)
        self.kind = kind


class Meta:
    """Schema navigation for the patch: kube's LookupPatchMeta over OpenAPI nodes.
    ``go_kind`` is the Go kind of the type this node stands for, as reflect names it."""

    def __init__(self, schemas: Schemas, node: Node | None, go_kind: str = "struct") -> None:
        self.schemas = schemas
        self.definition = ""  # the definition's name, where the node is one
        self.go_kind = go_kind
        if node:
            ref, _ = schemas.resolve(node)
            self.definition = ref or ""
        self.struct = self.definition.rsplit(".", 1)[-1]  # the Go struct's name
        self.node = self._resolve(node)

    def _resolve(self, node: Node | None) -> Node:
        if not node:
            return {}
        _, target = self.schemas.resolve(node)
        return target

    def _lookup(self, key: str) -> tuple[str, Node]:
        """forkedjson's lookup: the field (its exact name first, else one equal to it
        but for case) and its node; the struct's refusals raised as kube words them."""
        if self.go_kind == "map":
            raise PatchError(
                "merging an object in json but data type is not struct, instead is: map"
            )
        props = self.node.get("properties")
        if props is None:
            extra = self.node.get("additionalProperties")
            return key, extra if isinstance(extra, dict) else {}
        if key in props:
            return key, props[key] or {}
        folded = next((name for name in props if name.casefold() == key.casefold()), None)
        if folded is not None:
            return folded, props[folded] or {}
        if self.struct:
            raise PatchError(
                f'unable to find api field in struct {self.struct} for the json field "{key}"'
            )
        return key, {}

    def _field_kind(self, name: str, field: Node) -> str:
        """The Go kind of field ``name``: a map, a pointer (the Protobuf table knows which
        fields Go holds by pointer), else a struct."""
        if self._is_map(field):
            return "map"
        return "ptr" if self.definition and _is_pointer(self.definition, name) else "struct"

    def _is_map(self, node: Node) -> bool:
        target = self._resolve(node)
        return "additionalProperties" in target and "properties" not in target

    @staticmethod
    def _strategies(field: Node) -> list[str]:
        text = field.get("x-kubernetes-patch-strategy", "")
        return [s for s in text.split(",") if s]

    def for_struct(self, key: str) -> tuple[Meta, str]:
        name, field = self._lookup(key)
        sub = Meta(self.schemas, field, self._field_kind(name, field))
        return sub, main_strategy(self._strategies(field))

    def for_slice(self, key: str) -> tuple[Meta, str, str]:
        """LookupPatchMetadataForSlice: the element's meta, the strategy and merge key;
        a field that is no list is refused naming this type's kind."""
        name, field = self._lookup(key)
        target = self._resolve(field) if field else {}
        listed = not field or not self.struct or target.get("type") == "array"
        # a pointer field stands for what it points to: no refusal
        if not listed and self._field_kind(name, field) != "ptr":
            raise PatchError(f"expected slice or array type, but got: {self.go_kind}")
        items = (target or field).get("items") or {}
        strategy = main_strategy(self._strategies(field))
        element = Meta(self.schemas, items, "map" if self._is_map(items) else "struct")
        return element, strategy, field.get("x-kubernetes-patch-merge-key", "")


@functools.cache
def _is_pointer(definition: str, name: str) -> bool:
    """Whether Go holds field ``name`` of a built-in definition by pointer."""
    message = message_of_definition(definition)
    if message is None:
        return False
    try:
        return any(f.json == name and f.pointer for f in fields(message))
    except UnknownMessage:
        return False


def main_strategy(strategies: list[str]) -> str:
    """The strategy other than ``retainKeys`` (extractRetainKeysPatchStrategy)."""
    if len(strategies) > 2 or (len(strategies) == 2 and "retainKeys" not in strategies):
        raise PatchError(f"unexpected patch strategy: {strategies}")
    others = [s for s in strategies if s != "retainKeys"]
    return others[0] if others else ""
