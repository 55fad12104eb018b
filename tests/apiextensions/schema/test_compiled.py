"""The serving pipeline of one CRD version: decode, default, validate."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions.schema.compiled import CompiledSchema, DecodeError
from platform_api.apiextensions.schema.defaulting import default_errors
from platform_api.apiextensions.schema.structural import (
    is_structural,
    structural_errors,
    structural_init_error,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "size": {"type": "string"},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def _obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}, "spec": spec}


def test_decode_prunes_and_reports_unknown_fields_in_kube_order() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj(replicas=1, zeta=1, alpha={"x": 1}, template={"kind": "Pod", "metadata": {"q": 1}})
    obj["metadata"]["bogus"] = True
    unknown = schema.decode(obj, strict=True)
    assert unknown == [
        "metadata.bogus",
        "spec.alpha",
        "spec.zeta",
        "spec.template.metadata.q",
    ]
    assert obj == _obj(replicas=1, template={"kind": "Pod", "metadata": {}})


def test_decode_drops_non_nullable_nulls_without_defaults() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj(replicas=None, color=None)
    schema.decode(obj)
    schema.default(obj)
    assert obj["spec"] == {"color": "red"}


def test_decode_rejects_metadata_of_the_wrong_type() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj()
    obj["metadata"]["labels"] = {"a": 1}
    with pytest.raises(DecodeError) as e:
        schema.decode(obj)
    assert str(e.value) == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"
    )


def test_decode_from_storage_drops_malformed_metadata_and_repairs_generation() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj()
    obj["metadata"] = {"name": "n", "labels": 5, "namespace": "d"}
    schema.decode(obj, from_storage=True)
    assert obj["metadata"] == {"name": "n", "namespace": "d", "generation": 1}


def test_embedded_resource_errors() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj(template={"metadata": {"name": "a/b"}})
    assert [str(e) for e in schema.validate(obj)] == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]


def test_value_errors_as_kube_renders_them() -> None:
    schema = CompiledSchema(SCHEMA)
    obj = _obj(replicas="string", color="pink", tags=["a", "a"])
    assert [str(e) for e in schema.validate(obj)] == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"',
        'spec.color: Unsupported value: "pink": supported values: "red", "blue"',
        'spec.tags[1]: Duplicate value: "a"',
    ]


def test_update_ratchets_unchanged_values_and_list_errors() -> None:
    schema = CompiledSchema(SCHEMA)
    old = _obj(replicas=-1, tags=["a", "a"])
    assert schema.validate_update(_obj(replicas=-1, tags=["a", "a"], size="s"), old) == []
    errs = schema.validate_update(_obj(replicas=-2, tags=["a", "a"]), old)
    assert [str(e) for e in errs] == [
        "spec.replicas: Invalid value: -2: spec.replicas in body should be greater than or "
        "equal to 0"
    ]


def test_status_update_validates_status_under_its_own_path() -> None:
    schema = CompiledSchema(SCHEMA)
    old = _obj()
    new = {**_obj(), "status": {"ready": "yes"}}
    assert [str(e) for e in schema.validate_status_update(new, old)] == [
        'status.ready: Invalid value: "string": ready in body must be of type boolean: "string"'
    ]


def test_composite_errors_land_on_the_nil_path() -> None:
    schema = CompiledSchema(
        {
            "type": "object",
            "properties": {"spec": {"type": "integer", "anyOf": [{"maximum": 1}, {"minimum": 5}]}},
        }
    )
    assert [str(e) for e in schema.validate_value({"spec": 3})] == [
        '<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)',
        "spec: Invalid value: 3: spec in body should be less than or equal to 1",
    ]


ROOT = "spec.versions[0].schema.openAPIV3Schema"


def test_structural_init_error_is_single_and_distinguishable() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/x"}}}
    err = structural_init_error(schema, ROOT)
    assert str(err) == f"{ROOT}: Invalid value: \"\": OpenAPIV3Schema '$ref' is not supported"
    assert structural_errors(schema, ROOT) == [err]
    assert not is_structural(schema)
    assert is_structural(SCHEMA)


def test_default_errors_call_the_cel_hook_only_for_otherwise_valid_defaults() -> None:
    seen = []

    def cel(schema: dict[str, Any], value: Any, path: str, root: bool) -> list[Any]:
        seen.append((value, path, root))
        return []

    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "default": 1},
            "b": {"type": "integer", "default": "x"},
        },
    }
    errs = default_errors(schema, ROOT, cel_check=cel)
    # kube validates a default as a document of its own: the message names no path
    assert [str(e) for e in errs] == [
        f'{ROOT}.properties[b].default: Invalid value: "string":  in body must be of type '
        'integer: "string"'
    ]
    assert seen == [(1, f"{ROOT}.properties[a].default", False)]
