"""/openapi/v2 as gnostic's Protobuf, read back with the protobuf library and a descriptor
written from gnostic's OpenAPIv2.proto (the messages this server writes)."""

from __future__ import annotations

from typing import Any

import orjson
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict

from platform_api.apiserver import enablement, openapiproto, runtimeconfig
from platform_api.apiserver.openapi import OpenAPI

F = descriptor_pb2.FieldDescriptorProto
STRING, BOOL, INT64, DOUBLE, MESSAGE = (
    F.TYPE_STRING,
    F.TYPE_BOOL,
    F.TYPE_INT64,
    F.TYPE_DOUBLE,
    F.TYPE_MESSAGE,
)
REPEATED = F.LABEL_REPEATED

# message -> (field, number, type, repeated, message type or "")
MESSAGES: dict[str, list[tuple[str, int, int, bool, str]]] = {
    "Document": [
        ("swagger", 1, STRING, False, ""),
        ("info", 2, MESSAGE, False, "Info"),
        ("paths", 8, MESSAGE, False, "Paths"),
        ("definitions", 9, MESSAGE, False, "Definitions"),
    ],
    "Info": [("title", 1, STRING, False, ""), ("version", 2, STRING, False, "")],
    "Paths": [],
    "Definitions": [("additional_properties", 1, MESSAGE, True, "NamedSchema")],
    "NamedSchema": [("name", 1, STRING, False, ""), ("value", 2, MESSAGE, False, "Schema")],
    "Any": [("yaml", 2, STRING, False, "")],
    "NamedAny": [("name", 1, STRING, False, ""), ("value", 2, MESSAGE, False, "Any")],
    "TypeItem": [("value", 1, STRING, True, "")],
    "ItemsItem": [("schema", 1, MESSAGE, True, "Schema")],
    "Properties": [("additional_properties", 1, MESSAGE, True, "NamedSchema")],
    "AdditionalPropertiesItem": [
        ("schema", 1, MESSAGE, False, "Schema"),
        ("boolean", 2, BOOL, False, ""),
    ],
    "Schema": [
        ("_ref", 1, STRING, False, ""),
        ("format", 2, STRING, False, ""),
        ("description", 4, STRING, False, ""),
        ("default", 5, MESSAGE, False, "Any"),
        ("maximum", 7, DOUBLE, False, ""),
        ("minimum", 9, DOUBLE, False, ""),
        ("max_length", 11, INT64, False, ""),
        ("pattern", 13, STRING, False, ""),
        ("unique_items", 16, BOOL, False, ""),
        ("required", 19, STRING, True, ""),
        ("enum", 20, MESSAGE, True, "Any"),
        ("additional_properties", 21, MESSAGE, False, "AdditionalPropertiesItem"),
        ("type", 22, MESSAGE, False, "TypeItem"),
        ("items", 23, MESSAGE, False, "ItemsItem"),
        ("all_of", 24, MESSAGE, True, "Schema"),
        ("properties", 25, MESSAGE, False, "Properties"),
        ("read_only", 27, BOOL, False, ""),
        ("vendor_extension", 31, MESSAGE, True, "NamedAny"),
    ],
}


def document_class() -> Any:
    file = descriptor_pb2.FileDescriptorProto(name="openapiv2_test.proto", package="openapi.v2")
    file.syntax = "proto3"
    for name, fields in MESSAGES.items():
        message = file.message_type.add(name=name)
        oneof = name == "AdditionalPropertiesItem"
        if oneof:
            message.oneof_decl.add(name="oneof")
        for field, number, kind, repeated, type_name in fields:
            f = message.field.add(name=field, number=number, type=kind)
            f.label = REPEATED if repeated else F.LABEL_OPTIONAL
            if type_name:
                f.type_name = f".openapi.v2.{type_name}"
            if oneof:
                f.oneof_index = 0
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("openapi.v2.Document"))


def decoded(doc: dict[str, Any]) -> dict[str, Any]:
    message = document_class()()
    message.ParseFromString(openapiproto.document(doc))
    return MessageToDict(message, preserving_proto_field_name=True)


def test_a_document_reads_back_as_gnostic_compiles_it() -> None:
    gvk = [{"group": "", "kind": "ConfigMap", "version": "v1"}]
    doc = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.36.0"},
        "paths": {},
        "definitions": {
            "a.Thing": {
                "description": "A thing.",
                "type": "object",
                "required": ["spec"],
                "properties": {
                    "spec": {"$ref": "#/definitions/a.Spec", "description": "The spec."},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "open": {"type": "object", "additionalProperties": False},
                    "names": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 63, "pattern": "^a"},
                        "x-kubernetes-list-type": "set",
                    },
                    "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
                    "ratio": {"type": "number", "minimum": 0.5, "maximum": 2},
                    "both": {"allOf": [{"$ref": "#/definitions/a.Spec"}], "readOnly": True},
                },
                "x-kubernetes-group-version-kind": gvk,
            },
        },
    }
    out = decoded(doc)
    assert out["swagger"] == "2.0"
    assert out["info"] == {"title": "Kubernetes", "version": "v1.36.0"}
    (named,) = out["definitions"]["additional_properties"]
    assert named["name"] == "a.Thing"
    thing = named["value"]
    assert (thing["description"], thing["type"], thing["required"]) == (
        "A thing.",
        {"value": ["object"]},
        ["spec"],
    )
    (extension,) = thing["vendor_extension"]
    assert extension["name"] == "x-kubernetes-group-version-kind"
    assert yaml.safe_load(extension["value"]["yaml"]) == gvk  # what kubectl's e2e parses
    props = {p["name"]: p["value"] for p in thing["properties"]["additional_properties"]}
    assert props["spec"] == {"_ref": "#/definitions/a.Spec", "description": "The spec."}
    assert props["labels"]["additional_properties"] == {"schema": {"type": {"value": ["string"]}}}
    assert props["open"]["additional_properties"] == {"boolean": False}
    assert props["names"]["items"] == {
        "schema": [{"type": {"value": ["string"]}, "max_length": "63", "pattern": "^a"}]
    }
    assert props["names"]["vendor_extension"][0]["value"]["yaml"] == '"set"\n'
    assert [yaml.safe_load(e["yaml"]) for e in props["mode"]["enum"]] == ["A", "B"]
    assert props["mode"]["default"] == {"yaml": '"A"\n'}
    assert (props["ratio"]["minimum"], props["ratio"]["maximum"]) == (0.5, 2.0)
    assert props["both"] == {"all_of": [{"_ref": "#/definitions/a.Spec"}], "read_only": True}


def test_the_servers_whole_document_encodes_and_reads_back() -> None:
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    api = OpenAPI(scheme)
    json_doc = orjson.loads(api.v2_document())
    out = decoded(json_doc)
    names = [d["name"] for d in out["definitions"]["additional_properties"]]
    assert names == list(json_doc["definitions"])  # the JSON document's order


def test_negotiation_is_kube_openapis() -> None:
    pb, old = openapiproto.MEDIA_TYPE, openapiproto.DEPRECATED_MEDIA_TYPE
    assert openapiproto.negotiate([pb]) == "protobuf"
    assert openapiproto.negotiate([old]) == "protobuf"
    assert openapiproto.negotiate(["*/*"]) == "json"
    assert openapiproto.negotiate(["application/yaml", pb]) == "protobuf"
    assert openapiproto.negotiate(["application/yaml", "text/html"]) is None
