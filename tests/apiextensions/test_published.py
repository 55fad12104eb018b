"""A custom kind's OpenAPI definitions as kube-apiserver v1.36 publishes them.

The v3 expectations were read off the reference kube-apiserver's /openapi/v3; the v2 ones
follow kube's ToStructuralOpenAPIV2 and CRD OpenAPI builder (its /openapi/v2 JSON is not
readable in the reference build).
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.published import (
    METADATA,
    TYPE_META,
    kind_documents,
    selectable_fields,
)

GVK = {"x-kubernetes-group-version-kind": [{"group": "g.io", "version": "v1", "kind": "K"}]}
EMBEDDED_PROPS = {"apiVersion", "kind", "metadata"}


def spec_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def test_the_root_has_type_and_object_meta_in_both() -> None:
    v3, v2 = kind_documents(spec_schema(a={"type": "string"}), GVK)
    for doc in (v3, v2):
        assert doc["properties"]["metadata"] == METADATA
        assert doc["properties"]["apiVersion"] == TYPE_META["apiVersion"]
        assert doc["properties"]["kind"] == TYPE_META["kind"]
        assert doc["x-kubernetes-group-version-kind"] == GVK["x-kubernetes-group-version-kind"]
        assert doc["properties"]["spec"]["properties"]["a"] == {"type": "string"}


def test_a_root_keeping_unknown_fields_is_described_in_v3_and_bare_in_v2() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    v3, v2 = kind_documents(schema, GVK)
    assert set(v3["properties"]) == {"apiVersion", "kind", "metadata"}
    assert v3["x-kubernetes-preserve-unknown-fields"] is True and v3["type"] == "object"
    assert v2 == {"type": "object", **GVK}
    assert kind_documents(None, GVK) == ({"type": "object", **GVK}, {"type": "object", **GVK})


def test_int_or_string_is_unfolded_and_v2_drops_the_junctors() -> None:
    v3, v2 = kind_documents(spec_schema(port={"x-kubernetes-int-or-string": True}), GVK)
    port3 = v3["properties"]["spec"]["properties"]["port"]
    assert port3["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert v2["properties"]["spec"]["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    with_any = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}]}
    v3, _ = kind_documents(spec_schema(p=with_any), GVK)
    unfolded = v3["properties"]["spec"]["properties"]["p"]
    assert unfolded["allOf"] == [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]


def test_embedded_resources_get_type_meta_except_where_v2_keeps_unknown_fields() -> None:
    open_template = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    closed = {"type": "object", "x-kubernetes-embedded-resource": True, "required": ["kind"]}
    v3, v2 = kind_documents(spec_schema(t=open_template, c=closed), GVK)
    t3, c3 = (v3["properties"]["spec"]["properties"][k] for k in "tc")
    assert set(t3["properties"]) == EMBEDDED_PROPS and t3["required"] == ["kind", "apiVersion"]
    assert set(c3["properties"]) == EMBEDDED_PROPS and c3["required"] == ["kind", "apiVersion"]
    assert t3["properties"]["kind"]["description"].startswith("kind is a string value")
    t2, c2 = (v2["properties"]["spec"]["properties"][k] for k in "tc")
    assert t2 == {
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert set(c2["properties"]) == EMBEDDED_PROPS


def test_v2_leaves_nullable_and_open_nodes_untyped() -> None:
    schema = spec_schema(
        n={"type": "string", "nullable": True},
        free={"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {}},
        arr={"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {}},
        kept={"type": "object", "properties": {"x": {"type": "string"}}},
    )
    schema["properties"]["spec"]["required"] = ["n", "kept"]
    v3, v2 = kind_documents(schema, GVK)
    spec3, spec2 = v3["properties"]["spec"], v2["properties"]["spec"]
    assert spec3["properties"]["n"] == {"type": "string", "nullable": True}
    assert spec3["required"] == ["n", "kept"]
    assert spec2["properties"]["n"] == {}
    assert spec2["properties"]["free"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec2["properties"]["arr"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec2["properties"]["kept"]["type"] == "object"
    assert spec2["required"] == ["kept"]  # a nullable property is not required in v2


def test_selectable_fields_lose_their_leading_dot() -> None:
    version = {"selectableFields": [{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}]}
    assert selectable_fields(version) == [{"fieldPath": "spec.color"}, {"fieldPath": "spec.size"}]
    assert selectable_fields({}) == []
