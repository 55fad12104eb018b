"""Objects converted between a CRD's versions are coerced to the version they now have,
as kube's converter coerces them (unstructuredSchemaCoercer.apply)."""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.conversion import coerced, convert_none, schema_for

SPEC: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}


def crd(preserve: bool = False) -> dict[str, Any]:
    def schema(extra: str) -> dict[str, Any]:
        spec = {
            "type": "object",
            "properties": {"a": {"type": "string"}, extra: {"type": "string"}},
        }
        return {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}

    versions = [
        {"name": "v1", "served": True, "storage": True, "schema": schema("old")},
        {"name": "v2", "served": True, "storage": False, "schema": schema("new")},
    ]
    return {
        "spec": {"group": "g.example.com", "versions": versions, "preserveUnknownFields": preserve}
    }


def test_a_field_the_new_version_does_not_declare_is_pruned() -> None:
    obj = {
        "apiVersion": "g.example.com/v2",
        "kind": "K",
        "metadata": {"name": "x", "resourceVersion": "5"},
    }
    obj["spec"] = {"a": "1", "new": "2"}
    converted = convert_none(obj, "g.example.com/v1")
    assert converted is not None
    shaped = coerced(converted, schema_for(crd(), "v1"))
    assert shaped["spec"] == {"a": "1"} and shaped["apiVersion"] == "g.example.com/v1"
    assert list(shaped["metadata"]) == ["generation", "name", "resourceVersion"]  # Go sorts maps
    assert obj["spec"] == {"a": "1", "new": "2"}  # the input is left alone


def test_preserved_unknown_fields_stay() -> None:
    obj = {"apiVersion": "g.example.com/v1", "metadata": {"name": "x"}, "spec": {"new": "2"}}
    assert coerced(obj, schema_for(crd(preserve=True), "v1"))["spec"] == {"new": "2"}
