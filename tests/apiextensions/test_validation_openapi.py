"""The keyword rules of a CRD's schema (kube's ``ValidateCustomResourceDefinitionOpenAPISchema``),
and how structural, defaulting and CEL errors join them. Messages checked against kube v1.36."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiextensions.builders import crd, create_errors, obj, schema_crd, ver

CASES = [
    pytest.param(
        schema_crd({"type": "object", "nullable": True}),
        [
            "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
        ],
        id="nullable at the root",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "string",
                        "id": "x",
                        "$ref": "#/x",
                        "patternProperties": {"a": {}},
                        "definitions": {"d": {"type": "string"}},
                        "dependencies": {"a": ["b"]},
                        "additionalItems": False,
                    },
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].id: Forbidden: id is not supported",
            "spec.validation.openAPIV3Schema.properties[a].additionalItems: Forbidden: additionalItems is not supported",
            "spec.validation.openAPIV3Schema.properties[a].patternProperties: Forbidden: patternProperties is not supported",
            "spec.validation.openAPIV3Schema.properties[a].definitions: Forbidden: definitions is not supported",
            "spec.validation.openAPIV3Schema.properties[a].dependencies: Forbidden: dependencies is not supported",
            "spec.validation.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported",
        ],
        id="unsupported keywords",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "null"}))),
        [
            'spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"',
            "spec.validation.openAPIV3Schema.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative",
        ],
        id="type null",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "bogus"}))),
        [
            'spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: "bogus": supported values: "array", "boolean", "integer", "number", "object", "string"',
        ],
        id="unknown type",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "array", "items": [{"type": "string"}]}))),
        [
            "spec.validation.openAPIV3Schema.properties[a].items: Forbidden: items must be a schema object and not an array",
        ],
        id="items as an array",
    ),
    pytest.param(
        schema_crd(obj(("a", obj(("b", {"type": "string"}), additionalProperties=False)))),
        [
            "spec.validation.openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
        ],
        id="additionalProperties false with properties",
    ),
    pytest.param(
        schema_crd(
            obj(("a", obj(("b", {"type": "string"}), additionalProperties={"type": "string"})))
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
        ],
        id="additionalProperties schema with properties",
    ),
    pytest.param(
        schema_crd(obj(("a", obj(("b", {"type": "string"}), additionalProperties=True)))),
        [],
        id="additionalProperties true with properties",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "object", "additionalProperties": {"type": "string"}}))),
        [],
        id="map without properties",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "object", "x-kubernetes-preserve-unknown-fields": False}))),
        [
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
        ],
        id="x-kubernetes-preserve-unknown-fields false",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "string", "x-kubernetes-map-type": "foo"}))),
        [
            'spec.validation.openAPIV3Schema.properties[a].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-map-type: Unsupported value: "foo": supported values: "atomic", "granular"',
        ],
        id="map type on a string",
    ),
    pytest.param(
        schema_crd(
            obj(
                ("a", {"type": "object", "x-kubernetes-map-type": "atomic"}),
                ("b", {"type": "object", "x-kubernetes-map-type": "granular"}),
            )
        ),
        [],
        id="map types",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "string", "x-kubernetes-list-type": "foo"}))),
        [
            'spec.validation.openAPIV3Schema.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-type: Unsupported value: "foo": supported values: "atomic", "set", "map"',
        ],
        id="list type on a string",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"k": {"type": "string"}},
                            "required": ["k"],
                        },
                        "x-kubernetes-list-map-keys": ["k"],
                    },
                ),
                (
                    "b",
                    {
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set",
                        "x-kubernetes-list-map-keys": ["k"],
                    },
                ),
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty",
            'spec.validation.openAPIV3Schema.properties[b].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty',
        ],
        id="list-map-keys without map list type",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}},
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
        ],
        id="map list without keys",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": {"type": "string"},
                    },
                )
            )
        ),
        [
            'spec.validation.openAPIV3Schema.properties[a].items.type: Invalid value: "string": must be object if parent array\'s x-kubernetes-list-type is map',
        ],
        id="map list of strings",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k", "o", "z", "k"],
                        "items": {
                            "type": "object",
                            "required": ["k", "o"],
                            "properties": {"k": {"type": "string"}, "o": {"type": "object"}},
                        },
                    },
                )
            )
        ),
        [
            'spec.validation.openAPIV3Schema.properties[a].items.properties[o].type: Invalid value: "object": must be a scalar type if parent array\'s x-kubernetes-list-type is map',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Invalid value: ["k","o","z","k"]: entries must all be names of item properties',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Invalid value: ["k","o","z","k"]: must not contain duplicate entries',
        ],
        id="map list with bad keys",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": {
                            "type": "object",
                            "nullable": True,
                            "properties": {"k": {"type": "string", "nullable": True}},
                        },
                    },
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map",
            "spec.validation.openAPIV3Schema.properties[a].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            "spec.validation.openAPIV3Schema.properties[a].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
        ],
        id="map list with nullable items and keys",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k", "j"],
                        "items": {
                            "type": "object",
                            "required": ["k"],
                            "properties": {
                                "k": {"type": "string"},
                                "j": {"type": "integer", "default": 1},
                                "x": {"type": "string"},
                            },
                        },
                    },
                )
            )
        ),
        [],
        id="map list with defaulted and required keys",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}},
                ),
                (
                    "b",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {
                            "type": "array",
                            "items": {"type": "string"},
                            "x-kubernetes-list-type": "set",
                        },
                    },
                ),
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set",
            'spec.validation.openAPIV3Schema.properties[b].items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set',
        ],
        id="set of non-atomic items",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "object", "x-kubernetes-map-type": "atomic"},
                    },
                ),
                (
                    "b",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "array", "items": {"type": "string"}},
                    },
                ),
                (
                    "c",
                    {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                ),
            )
        ),
        [],
        id="set of atomic items",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "string", "nullable": True},
                    },
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set",
        ],
        id="set of nullable items",
    ),
    pytest.param(
        schema_crd(obj(("a", {"type": "array", "uniqueItems": True, "items": {"type": "string"}}))),
        [
            "spec.validation.openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ],
        id="uniqueItems",
    ),
    pytest.param(
        schema_crd(
            obj(
                ("metadata", {"type": "object", "default": {"name": "x"}}),
                ("kind", {"type": "string", "default": "K"}),
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata",
            "spec.validation.openAPIV3Schema.properties[kind].default: Forbidden: must not be set in top-level kind",
        ],
        id="defaults in top-level metadata and kind",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "metadata",
                    obj(
                        (
                            "name",
                            {
                                "type": "object",
                                "x-kubernetes-embedded-resource": True,
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        )
                    ),
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[metadata].properties[name].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta",
        ],
        id="embedded resource inside metadata",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": " "},
                            {"rule": "self == 'x'", "message": " "},
                            {"rule": "self == 'x'", "message": "a\nb"},
                            {"rule": "self == 'x' ||\n true"},
                            {"rule": "true", "messageExpression": "  ", "reason": "Bogus"},
                            {"rule": "true", "fieldPath": " "},
                            {"rule": "true", "fieldPath": ".x\n"},
                        ],
                    },
                )
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[0].rule: Required value: rule is not specified",
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[1].message: Invalid value: " ": must be non-empty if specified',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[2].message: Invalid value: "a\\nb": must not contain line breaks',
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[3].message: Required value: message must be specified if rule contains line breaks",
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[4].messageExpression: Required value: messageExpression must be non-empty if specified",
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[4].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[5].fieldPath: Invalid value: " ": must be non-empty if specified',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[5].fieldPath: Invalid value: " ": must be a valid path',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[6].fieldPath: Invalid value: ".x\\n": must not contain line breaks',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[6].fieldPath: Invalid value: ".x\\n": must be a valid path',
        ],
        id="rule shapes",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    obj(
                        ("b", {"type": "string"}),
                        ("l", {"type": "array", "items": {"type": "string"}}),
                        ("m", {"type": "object", "additionalProperties": {"type": "string"}}),
                        **{
                            "x-kubernetes-validations": [
                                {"rule": "true", "fieldPath": f}
                                for f in (
                                    ".c",
                                    ".b",
                                    "b",
                                    ".l",
                                    ".l[0]",
                                    ".m['k']",
                                    ".m.k",
                                    ".b['x']",
                                )
                            ]
                        },
                    ),
                )
            )
        ),
        [
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[0].fieldPath: Invalid value: ".c": must be a valid path',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[2].fieldPath: Invalid value: "b": must be a valid path',
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[4].fieldPath: Invalid value: ".l[0]": must be a valid path',
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[7].fieldPath: Invalid value: \".b['x']\": must be a valid path",
        ],
        id="rule field paths",
    ),
    pytest.param(
        schema_crd(
            obj(
                (
                    "a",
                    {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "true", "reason": r}
                            for r in (
                                "FieldValueRequired",
                                "FieldValueForbidden",
                                "FieldValueInvalid",
                                "FieldValueDuplicate",
                                "",
                            )
                        ],
                    },
                )
            )
        ),
        [
            'spec.validation.openAPIV3Schema.properties[a].x-kubernetes-validations[4].reason: Unsupported value: "": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        ],
        id="rule reasons",
    ),
    pytest.param(
        schema_crd(
            obj(
                ("a", {"type": "array", "items": {"type": "string", "uniqueItems": True}}),
                (
                    "b",
                    {
                        "type": "object",
                        "additionalProperties": {"type": "string", "uniqueItems": True},
                    },
                ),
                (
                    "c",
                    {
                        "type": "string",
                        "allOf": [{"uniqueItems": True}],
                        "not": {"uniqueItems": True},
                    },
                ),
            )
        ),
        [
            "spec.validation.openAPIV3Schema.properties[a].items.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "spec.validation.openAPIV3Schema.properties[b].additionalProperties.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "spec.validation.openAPIV3Schema.properties[c].not.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "spec.validation.openAPIV3Schema.properties[c].allOf[0].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ],
        id="errors in items, allOf, not and additionalProperties",
    ),
]


@pytest.mark.parametrize(("definition", "expected"), CASES)
def test_schema_rules(definition: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(definition) == expected


def test_embedded_resource_metadata() -> None:
    labels = {"type": "object", "additionalProperties": {"type": "string", "default": "y"}}
    embedded = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {
            "apiVersion": {"type": "string", "default": "v1"},
            "kind": {"type": "string", "default": "Pod"},
            "metadata": obj(("name", {"type": "string", "default": "x"}), ("labels", labels)),
        },
    }
    at = "spec.validation.openAPIV3Schema.properties[e].properties[metadata].properties[labels]"
    assert create_errors(schema_crd(obj(("e", embedded)))) == [
        f"{at}.additionalProperties.default: Forbidden: must not be set inside "
        "additionalProperties applying to object metadata"
    ]


def test_status_root_shows_enum_values_as_go_decodes_them() -> None:
    schema = {"type": "object", "enum": [{"a": 1, "b": 1.0, "c": 12345678901234567890}]}
    (error,) = create_errors(crd([ver(schema=schema, subresources={"status": {}})]))
    assert '"Enum":[{"a":1,"b":1,"c":12345678901234567000}]' in error
