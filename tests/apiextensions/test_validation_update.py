"""CRD update validation: immutable fields, and rules that ratchet when the stored object
already broke them (kube's ``validationOptions`` from the old object)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api.apiextensions import validation_options, validation_schema
from platform_api.apiextensions.validation import validate_crd_status_update
from platform_api.validation import field
from tests.apiextensions.builders import crd, obj, stored, update_errors, ver

TWO = [ver("v1"), ver("v2", storage=False)]


def changed(old: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"].update(spec)
    return new


def test_unchanged_is_valid() -> None:
    old = stored(crd(TWO))
    assert update_errors(copy.deepcopy(old), old) == []


def test_group_and_plural_are_immutable() -> None:
    old = stored(crd())
    new = changed(old, group="other.com", names={**old["spec"]["names"], "plural": "bars"})
    # unlike a create, an update does not hold the name to plural.group: both are immutable
    assert update_errors(new, old) == [
        'spec.group: Invalid value: "other.com": field is immutable',
        'spec.names.plural: Invalid value: "bars": field is immutable',
    ]


def test_kind_and_scope_are_immutable_once_established() -> None:
    names = {"plural": "foos", "singular": "foo", "kind": "Bar", "listKind": "FooList"}
    for established, expected in (
        (
            True,
            [
                'spec.scope: Invalid value: "Cluster": field is immutable',
                'spec.names.kind: Invalid value: "Bar": field is immutable',
            ],
        ),
        (False, []),
    ):
        old = stored(crd(), established=established)
        assert update_errors(changed(old, scope="Cluster", names=names), old) == expected


def test_stored_version_must_stay() -> None:
    old = stored(crd(TWO))
    new = changed(old, versions=[ver("v2")])
    assert update_errors(new, old) == [
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v1 and removes v1 from "
        "status.storedVersions"
    ]


def test_preserve_unknown_fields() -> None:
    old = stored(crd())
    error = (
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
        "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
    )
    assert update_errors(changed(old, preserveUnknownFields=True), old) == [error]
    legacy = changed(old, preserveUnknownFields=True)
    assert update_errors(copy.deepcopy(legacy), legacy) == []
    # switching it off again needs a schema, as every CRD without it does
    assert update_errors(changed(legacy, preserveUnknownFields=False), legacy) == []


def test_invalid_types_ratchet() -> None:
    bogus = [ver(schema=obj(("a", {"type": "bogus"})))]
    error = (
        'spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: "bogus": '
        'supported values: "array", "boolean", "integer", "number", "object", "string"'
    )
    assert update_errors(crd(bogus), stored(crd())) == [error]
    assert update_errors(crd(bogus), stored(crd(bogus))) == []


def _set_of(items: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        ver(schema=obj(("a", {"type": "array", "x-kubernetes-list-type": "set", "items": items})))
    ]


def test_non_atomic_set_items_ratchet() -> None:
    granular = _set_of({"type": "object"})
    error = (
        "spec.validation.openAPIV3Schema.properties[a].items.x-kubernetes-map-type: Invalid "
        "value: null: must be atomic as item of a list with x-kubernetes-list-type=set"
    )
    assert update_errors(crd(granular), stored(crd())) == [error]
    assert update_errors(crd(granular), stored(crd(granular))) == []


def _map_list(key: dict[str, Any]) -> list[dict[str, Any]]:
    item = {"type": "object", "properties": {"k": key}}
    schema = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
    return [ver(schema=obj(("a", {**schema, "items": item})))]


def test_map_list_keys_ratchet() -> None:
    optional = _map_list({"type": "string", "nullable": True})
    at = "spec.validation.openAPIV3Schema.properties[a].items.properties[k]"
    assert update_errors(crd(optional), stored(crd())) == [
        f"{at}.default: Required value: this property is in x-kubernetes-list-map-keys, so it "
        "must have a default or be a required property",
        f"{at}.nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it "
        "cannot be nullable",
    ]
    assert update_errors(crd(optional), stored(crd(optional))) == []


def test_schema_required_unless_the_old_object_lacked_one() -> None:
    bare = [{"name": "v1", "served": True, "storage": True}]
    required = "spec.versions[0].schema.openAPIV3Schema: Required value"
    pruned = f"{required}: because otherwise all fields are pruned"
    assert update_errors(crd(bare), stored(crd())) == [required]
    assert update_errors(crd(bare), stored(crd(bare))) == [pruned]
    unserved = [{"name": "v1", "served": False, "storage": True}]
    assert update_errors(crd(unserved), stored(crd(bare))) == []


def test_non_structural_schema_ratchets(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = "must not be empty for specified object fields"

    def structural(schema: dict[str, Any], path: str) -> list[field.FieldError]:
        props = schema.get("properties") or {}
        return [
            field.required(f"{path}.properties[{k}].type", problem)
            for k, v in props.items()
            if not v
        ]

    monkeypatch.setattr(validation_options, "structural_errors", structural)
    monkeypatch.setattr(validation_schema, "structural_errors", structural)
    loose = [ver(schema=obj(("a", {})))]
    assert update_errors(crd(loose), stored(crd())) == [
        f"spec.validation.openAPIV3Schema.properties[a].type: Required value: {problem}"
    ]
    # kube still requires a structural schema without preserveUnknownFields
    assert update_errors(crd(loose), stored(crd(loose))) == [
        f"spec.validation.openAPIV3Schema.properties[a].type: Required value: {problem}"
    ]
    legacy = crd(loose, preserveUnknownFields=True)
    assert update_errors(legacy, stored(legacy)) == []


def _selectable(count: int, offset: int = 0) -> list[dict[str, Any]]:
    props = [(f"f{i}", {"type": "string"}) for i in range(12)]
    fields = [{"jsonPath": f".spec.f{i + offset}"} for i in range(count)]
    return [ver(schema=obj(("spec", obj(*props))), selectableFields=fields)]


def test_too_many_selectable_fields_ratchet() -> None:
    error = "spec.selectableFields: Too many: 9: must have at most 8 items"
    assert update_errors(crd(_selectable(9)), stored(crd(_selectable(1)))) == [error]
    assert update_errors(crd(_selectable(9)), stored(crd(_selectable(9)))) == []
    assert update_errors(crd(_selectable(9, 1)), stored(crd(_selectable(9)))) == [error]


def test_approval_state_unchanged_is_accepted() -> None:
    protected = crd(group="foo.platform.io", metadata={"name": "foos.foo.platform.io"})
    old = stored(protected)
    assert update_errors(copy.deepcopy(old), old) == []
    annotated = copy.deepcopy(old)
    annotated["metadata"]["annotations"] = {"api-approved.platform.io": "yes"}
    assert update_errors(annotated, old) == [
        'metadata.annotations[api-approved.platform.io]: Invalid value: "yes": protected groups '
        'must have approval annotation "api-approved.platform.io" with either a URL or a reason '
        'starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111'
    ]


def test_unchanged_schemas_are_known() -> None:
    schema_a = obj(("a", {"type": "string"}))
    schema_b = obj(("b", {"type": "string"}))
    old = validation_options.internal.internal_spec(
        crd([ver("v1", schema=schema_a), ver("v2", storage=False, schema=schema_b)])["spec"]
    )
    new = validation_options.internal.internal_spec(
        crd(
            [
                ver("v1", schema=schema_a),
                ver("v2", storage=False, schema=schema_a),
                ver("v3", storage=False, schema=schema_b),
            ]
        )["spec"]
    )
    opts = validation_options.update_options(new, old, {})
    assert opts.versions_with_unchanged_schemas == frozenset({"v1"})
    assert not opts.require_immutable_names
    assert opts.allow_invalid_ca_bundle


def test_status_update() -> None:
    old = stored(crd())
    new = copy.deepcopy(old)
    new["status"]["acceptedNames"] = {"plural": "foos", "kind": "Foo", "listKind": "Foo"}
    assert [str(e) for e in validate_crd_status_update(new, old)] == [
        'status.acceptedNames.listKind: Invalid value: "Foo": kind and listKind may not be the same'
    ]
