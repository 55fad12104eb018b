"""CEL types of OpenAPI schemas: escaping, declarations, sizes, value conversion."""

from __future__ import annotations

import pytest
from google.protobuf import duration_pb2, timestamp_pb2

from platform_api.cel.schematypes import MAX_REQUEST_SIZE, build_pool, decl_type, escape
from platform_api.cel.values import converter


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("a.a", "a__dot__a"),
        ("a-a", "a__dash__a"),
        ("a__a", "a__underscores__a"),
        ("a.-/__a", "a__dot____dash____slash____underscores__a"),
        ("a._a", "a__dot___a"),
        ("a__.__a", "a__underscores____dot____underscores__a"),
        ("a___a", "a__underscores___a"),
        ("a____a", "a__underscores____underscores__a"),
        ("a__dot__a", "a__underscores__dot__underscores__a"),
        ("true", "__true__"),
        ("namespace", "__namespace__"),
        ("while", "__while__"),
        ("has", "has"),
        ("exists_one", "exists_one"),
        ("getDayOfMonth", "getDayOfMonth"),
        ("@", None),
        ("1up", None),
        ("👑", None),
        ("", None),
    ],
)
def test_escape(name: str, escaped: str | None) -> None:
    assert escape(name) == escaped


def test_declared_types_and_sizes() -> None:
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "maxLength": 5},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "maxProperties": 3,
            },
            "color": {"type": "string", "enum": ["red", "green"]},
            "ios": {"x-kubernetes-int-or-string": True},
            "free": {"x-kubernetes-preserve-unknown-fields": True},
            "when": {"type": "string", "format": "date-time"},
            "a-b": {"type": "integer"},
        },
    }
    decl = decl_type(schema, resource_root=True)
    assert decl is not None
    fields = {k: (name, t.kind, t.max_elements) for k, (name, t) in decl.fields.items()}
    assert fields == {
        "name": ("name", "string", 20),
        "tags": ("tags", "list", (MAX_REQUEST_SIZE - 2) // 3),
        "labels": ("labels", "map", 3),
        "color": ("color", "string", 5),
        "ios": ("ios", "dyn", MAX_REQUEST_SIZE - 2),
        "when": ("when", "timestamp", 32),
        "a__dash__b": ("a-b", "int", 0),
        "kind": ("kind", "string", MAX_REQUEST_SIZE - 2),
        "apiVersion": ("apiVersion", "string", MAX_REQUEST_SIZE - 2),
        "metadata": ("metadata", "object", 0),
    }
    assert decl.min_size == 2 + len("name") + 2 + 4
    build_pool(decl)
    assert decl.type_text().startswith("selfType")
    assert decl.fields["tags"][1].type_text() == "list(string)"


def test_nested_lists_and_maps_get_messages() -> None:
    schema = {
        "type": "object",
        "properties": {
            "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            "byName": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                },
            },
        },
    }
    decl = decl_type(schema)
    assert decl is not None
    build_pool(decl)
    inner = decl.fields["byName"][1].elem
    assert inner is not None and inner.message.endswith(".ByName")


def test_value_conversion_only_where_needed() -> None:
    plain = {"type": "object", "properties": {"s": {"type": "string"}, "i": {"type": "integer"}}}
    assert converter(decl_type(plain), plain) is None
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"d": {"type": "string", "format": "duration"}},
                },
            },
            "day": {"type": "string", "format": "date"},
            "b": {"type": "string", "format": "byte"},
        },
    }
    convert = converter(decl_type(schema), schema)
    assert convert is not None
    value = {"n": 1, "items": [{"d": "90s"}, {"d": "bogus"}], "day": "2020-02-03", "b": "aGk="}
    out = convert(value)
    assert out["n"] == 1.0 and isinstance(out["n"], float)
    assert out["items"][0]["d"] == duration_pb2.Duration(seconds=90)
    assert out["items"][1]["d"] == "bogus"
    assert isinstance(out["day"], timestamp_pb2.Timestamp) and out["b"] == b"hi"
    assert value["n"] == 1 and value["items"][0]["d"] == "90s"  # the input is not modified
