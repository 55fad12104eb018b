"""Schema walking helpers: kube's ``ValidFieldPath``, ``NewStructural``'s refusals, the Go JSON
rendering of internal types."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions import validation_schemautil as util

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "foo": {
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"f1": {"type": "number"}}},
        },
        "a": {
            "type": "object",
            "properties": {
                "bbb": {
                    "type": "object",
                    "properties": {"c": {"type": "number"}, "34": {"type": "number"}},
                },
                "bbb.c": {"type": "object", "properties": {"a-b34": {"type": "number"}}},
            },
        },
        "list": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "a-b.34": {"type": "number"}},
            },
        },
    },
}


@pytest.mark.parametrize(
    ("path", "error"),
    [
        (".a", None),
        (".a.bbb", None),
        (".foo.f1", None),
        (".a['bbb']", None),
        (".a['bbb.c']", None),
        (".a['bbb.c'].a-b34", None),
        (".a['bbb.c']['a-b34']", None),
        (".a.bbb.c", None),
        (".a.bbb['34']", None),
        (".a.bbb.34", None),
        (".list", None),
        (".a.foo", "does not refer to a valid field"),
        (".a.bbb[0]", "expected single quoted string but got 0"),
        (".list[1]", "expected single quoted string but got 1"),
        (".list.a", "does not refer to a valid field"),
        (".list['a-b.34']", "does not refer to a valid field"),
        (".list.a-b.34", "does not refer to a valid field"),
        ("a", "expected [ or . but got: a"),
        (".c", "does not refer to a valid field"),
        (".a..b", "does not refer to a valid field"),
        (".list[-1]", "expected single quoted string but got -1"),
        (".list[1.0]", "expected single quoted string but got 1"),
        (".a[", "unexpected end of JSON path"),
        (".a['bbb'", "unexpected end of JSON path"),
        (".a['bbb'x", "expected ] but got x"),
        (".a['b\\qb']", "invalid string literal: invalid escape char \\q"),
        (".", "unexpected end of JSON path"),
    ],
)
def test_valid_field_path(path: str, error: str | None) -> None:
    if error is None:
        util.valid_field_path(path, SCHEMA)
    else:
        with pytest.raises(ValueError, match=r".") as caught:
            util.valid_field_path(path, SCHEMA)
        assert str(caught.value) == error


def test_valid_field_path_steps() -> None:
    steps, found = util.valid_field_path(".foo['x.y'].f1", SCHEMA)
    assert str(steps) == "foo[x.y].f1"
    assert found == {"type": "number"}
    with pytest.raises(ValueError, match="array notation is not allowed"):
        util.valid_field_path(".a['bbb']", SCHEMA, allow_arrays=False)


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"type": "object"}, None),
        ({"id": "x"}, "OpenAPIV3Schema 'id' is not supported"),
        ({"$schema": "x"}, "OpenAPIV3Schema 'schema' is not supported"),
        ({"$ref": ""}, None),
        ({"properties": {"a": {"$ref": "#"}}}, "OpenAPIV3Schema '$ref' is not supported"),
        (
            {"additionalItems": {"type": "string"}},
            "OpenAPIV3Schema 'additionalItems' is not supported",
        ),
        ({"items": [{}]}, "OpenAPIV3Schema 'items' must be a schema, but is an array"),
        ({"items": []}, None),
        ({"allOf": [{"definitions": {"a": {}}}]}, "OpenAPIV3Schema 'definitions' is not supported"),
        (
            {"additionalProperties": {"x-kubernetes-preserve-unknown-fields": False}},
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
        ),
    ],
)
def test_structural_init_error(schema: dict[str, Any], error: str | None) -> None:
    assert util.structural_init_error(schema) == error


def test_schema_predicates() -> None:
    assert util.has_defaults({"not": {"default": 0}})
    assert not util.has_defaults({"properties": {"a": {"type": "string"}}})
    assert util.has_kubernetes_extensions({"items": {"x-kubernetes-list-type": "atomic"}})
    assert util.has_invalid_types({"dependencies": {"a": {"type": "bogus"}}})
    assert util.has_non_atomic_set_type(
        {
            "x-kubernetes-list-type": "set",
            "items": {"type": "array", "x-kubernetes-list-type": "map"},
        }
    )
    assert not util.has_non_atomic_set_type(
        {"x-kubernetes-list-type": "set", "items": {"type": "string"}}
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.5e-7, "1.5e-7"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (0.000001, "0.000001"),
        (5.0, "5"),
        (12345678901234567890, "12345678901234567000"),
        (-0.25, "-0.25"),
        ({"b": "<&>", "a": [True, None, 3]}, '{"a":[true,null,3],"b":"\\u003c\\u0026\\u003e"}'),
        (gojson.Struct(Z=1, A=2), '{"Z":1,"A":2}'),
    ],
)
def test_go_json(value: Any, text: str) -> None:
    assert gojson.dumps(value) == text


def test_internal_schema_rendering() -> None:
    rendered = gojson.dumps(
        gojson.schema(
            {
                "type": "array",
                "items": {"type": "string"},
                "additionalProperties": False,
                "x-kubernetes-validations": [{"rule": "true"}],
                "externalDocs": {"url": "u"},
            }
        )
    )
    assert rendered.startswith('{"ID":"","Schema":"","Ref":null,"Description":"","Type":"array",')
    assert '"Items":{"Schema":{"ID":""' in rendered and '"JSONSchemas":null}' in rendered
    assert '"AdditionalProperties":{"Allows":false,"Schema":null}' in rendered
    assert '"ExternalDocs":{"Description":"","URL":"u"}' in rendered
    assert rendered.endswith(
        '"XValidations":[{"Rule":"true","Message":"","MessageExpression":"","Reason":null,'
        '"FieldPath":"","OptionalOldSelf":null}]}'
    )
