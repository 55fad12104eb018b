"""Type schemas of the built-in kinds, from upstream OpenAPI data, rebranded.

The ``kubernetes-validate`` package ships kube's OpenAPI v3 definitions (as JSON
Schema, with the ``x-kubernetes-*`` list, map and patch markers).  They are loaded
once and normalized into plain OpenAPI nodes: single ``type`` strings, references
as bare definition names, ``io.k8s.*`` names and ``*.k8s.io`` groups rebranded.
Every consumer (body decoding, patch, apply, the /openapi documents) reads these
nodes; no kind has a hand-written schema.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from typing import Any

import orjson

from platform_api.scheme.types import rebrand_group

SCHEMA_VERSION = "v1.36.0"
Node = dict[str, Any]

INT_OR_STRING = "io.platform.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.platform.apimachinery.pkg.api.resource.Quantity"
TIME = "io.platform.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME = "io.platform.apimachinery.pkg.apis.meta.v1.MicroTime"
OBJECT_META = "io.platform.apimachinery.pkg.apis.meta.v1.ObjectMeta"
RAW_EXTENSION = "io.platform.apimachinery.pkg.runtime.RawExtension"
FIELDS_V1 = "io.platform.apimachinery.pkg.apis.meta.v1.FieldsV1"
# Kinds for which kube-openapi keeps a one-of type rather than a plain type.
_ONE_OF = {INT_OR_STRING, QUANTITY}


def rebrand_definition(name: str) -> str:
    return "io.platform." + name[len("io.k8s.") :] if name.startswith("io.k8s.") else name


def _data_path() -> str:
    # Located without importing the package, which would pull in jsonschema (0.14 s).
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations
    base = spec.submodule_search_locations[0]
    return os.path.join(
        base, "kubernetes-json-schema", f"{SCHEMA_VERSION}-local", "_definitions.json"
    )


def _normalize(node: Any) -> Any:
    if isinstance(node, list):
        return [_normalize(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: Node = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out["type"] = kinds[0] if kinds else "object"
        elif key == "$ref":
            out["$ref"] = rebrand_definition(value.rsplit("/", 1)[-1])
        elif key in ("properties", "patternProperties"):
            out[key] = {prop: _normalize(schema) for prop, schema in value.items()}
        elif key == "x-kubernetes-group-version-kind":
            out[key] = [{**gvk, "group": rebrand_group(gvk["group"])} for gvk in value]
        else:
            out[key] = _normalize(value)
    return out


class Schemas:
    """Normalized definitions plus the index from (group, version, kind) to a name."""

    def __init__(self, definitions: dict[str, Node]) -> None:
        self.definitions = definitions
        # name -> (v3, v2): how the OpenAPI documents show a definition, where that
        # differs from the one served types are read by (custom kinds).
        self.published: dict[str, tuple[Node, Node]] = {}
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        for def_name, schema in definitions.items():
            self._index(def_name, schema)

    def _index(self, def_name: str, schema: Node) -> None:
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            self._by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), def_name)

    def copy(self) -> Schemas:
        """A copy that can take definitions of its own (the built-in nodes are shared)."""
        copied = Schemas(dict(self.definitions))
        copied.published = dict(self.published)
        return copied

    def add(self, def_name: str, schema: Node, published: tuple[Node, Node] | None = None) -> None:
        """Add or replace a definition (a custom resource's, while its CRD is served)."""
        self.remove(def_name)
        self.definitions[def_name] = schema
        if published is not None:
            self.published[def_name] = published
        self._index(def_name, schema)

    def remove(self, def_name: str) -> None:
        old = self.definitions.pop(def_name, None)
        self.published.pop(def_name, None)
        if old is None:
            return
        for gvk in old.get("x-kubernetes-group-version-kind", ()):
            key = (gvk["group"], gvk["version"], gvk["kind"])
            if self._by_gvk.get(key) == def_name:
                del self._by_gvk[key]

    def for_kind(self, group: str, version: str, kind: str) -> str:
        """The definition name of a kind; KeyError if upstream has none."""
        return self._by_gvk[(group, version, kind)]

    def get(self, name: str) -> Node:
        return self.definitions[name]

    def resolve(self, node: Node) -> tuple[str, Node]:
        """Follow ``$ref`` (and a single-element ``allOf``) to the definition it names."""
        ref = node.get("$ref")
        if ref is None:
            all_of = node.get("allOf")
            if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
                ref = all_of[0]["$ref"]
        if ref is None:
            return "", node
        return ref, self.definitions[ref]


@cache
def load_schemas() -> Schemas:
    with open(_data_path(), "rb") as f:
        raw = orjson.loads(f.read())["$defs"]
    definitions = {rebrand_definition(name): _normalize(schema) for name, schema in raw.items()}
    # The validator package adds apiVersion/kind enums to every kind; kube has none.
    for schema in definitions.values():
        for prop in ("apiVersion", "kind"):
            field = schema.get("properties", {}).get(prop)
            if field is not None:
                field.pop("enum", None)
    return Schemas(definitions)


def is_one_of(ref: str) -> bool:
    return ref in _ONE_OF
