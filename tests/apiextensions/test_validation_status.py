"""CRD create validation beyond the spec: metadata, stored versions, accepted names, and
where a schema's errors are reported."""

from __future__ import annotations

from platform_api.apiextensions.validation import validate_crd, validate_crd_status
from platform_api.validation.names import is_dns1035_label
from tests.apiextensions.builders import crd, create_errors, obj, prepared, ver


def test_root_type_with_status_comes_first() -> None:
    definition = crd(
        [ver(schema={"type": "array", "items": {"type": "string"}}, subresources={"status": {}})]
    )
    assert create_errors(definition)[0] == (
        'spec.validation.openAPIV3Schema.type: Invalid value: "array": only "object" is allowed '
        "as the type at the root of the schema if the status subresource is enabled"
    )


def test_generate_name_must_also_be_plural_dot_group() -> None:
    definition = prepared(crd(metadata={"generateName": "foo-", "name": "foo-x1"}))
    assert [str(e) for e in validate_crd(definition)] == [
        'metadata.generateName: Invalid value: "foo-": must be spec.names.plural+"."+spec.group',
        'metadata.name: Invalid value: "foo-x1": must be spec.names.plural+"."+spec.group',
    ]


def test_namespace_is_forbidden() -> None:
    definition = prepared(crd(metadata={"name": "foos.example.com", "namespace": "default"}))
    assert [str(e) for e in validate_crd(definition)] == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_stored_versions_must_name_the_storage_version() -> None:
    definition = prepared(crd([ver("v1"), ver("v2", storage=False)]))
    definition["status"]["storedVersions"] = ["v2", "v3", "v1", "v4"]
    assert [str(e) for e in validate_crd(definition)] == [
        f'status.storedVersions[{i}]: Invalid value: "{v}": missing from spec.versions; {v} was '
        f"previously a storage version, and must remain in spec.versions until a storage "
        f"migration ensures no data remains persisted in {v} and removes {v} from "
        "status.storedVersions"
        for i, v in ((1, "v3"), (3, "v4"))
    ]
    definition["status"]["storedVersions"] = ["v2"]
    assert [str(e) for e in validate_crd(definition)] == [
        'status.storedVersions: Invalid value: ["v2"]: must have the storage version v1'
    ]


def test_status_accepted_names() -> None:
    definition = prepared(crd())
    definition["status"]["acceptedNames"] = {"plural": "Foos", "kind": "Foo", "listKind": "Foo"}
    expected = [
        f'status.acceptedNames.plural: Invalid value: "Foos": {is_dns1035_label("Foos")[0]}',
        'status.acceptedNames.listKind: Invalid value: "Foo": kind and listKind may not be the same',
    ]
    assert [str(e) for e in validate_crd_status(definition)] == expected
    assert [str(e) for e in validate_crd(definition)] == expected


def test_schema_with_identical_versions_reports_under_spec_validation() -> None:
    schema = obj(("a", {"type": "string", "uniqueItems": True}))
    one = crd([ver("v1", schema=schema), ver("v2", storage=False, schema=schema)])
    two = crd([ver("v1", schema=schema), ver("v2", storage=False, schema=obj())])
    detail = "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
    assert create_errors(one) == [
        f"spec.validation.openAPIV3Schema.properties[a].uniqueItems: {detail}"
    ]
    assert create_errors(two) == [
        f"spec.versions[0].schema.openAPIV3Schema.properties[a].uniqueItems: {detail}"
    ]


def test_an_unnamed_storage_version_is_recorded_and_only_its_name_is_wrong() -> None:
    """kube's strategy records the storage version whatever its name (recorded from kube:
    the stored versions are not reported)."""
    definition = prepared(crd([ver("")]))
    assert definition["status"]["storedVersions"] == [""]
    assert [str(e) for e in validate_crd(definition)] == [
        f'spec.versions[0].name: Invalid value: "": {is_dns1035_label("")[0]}'
    ]


def test_rules_under_a_type_kube_refuses_are_not_compiled() -> None:
    """A schema error stops kube short of CEL: only the type is reported."""
    unsupported = (
        'spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: "strin": '
        'supported values: "array", "boolean", "integer", "number", "object", "string"'
    )
    rule = [{"rule": "self.x == 1"}]
    for schema in (
        obj(("a", {"type": "strin", "x-kubernetes-validations": rule})),
        obj(("a", {"type": "strin"}), **{"x-kubernetes-validations": rule}),
    ):
        assert create_errors(crd([ver(schema=schema)])) == [unsupported]
