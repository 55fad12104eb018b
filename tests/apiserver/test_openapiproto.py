"""/openapi/v2 as gnostic's Protobuf, read back with the protobuf library and a descriptor
written from gnostic's OpenAPIv2.proto (the messages this server writes)."""

from __future__ import annotations

from typing import Any

import orjson
import yaml
from google.protobuf.json_format import MessageToDict

from platform_api.apiserver import enablement, openapiproto, runtimeconfig
from platform_api.apiserver.openapi import OpenAPI
from platform_api.codec.protodesc import (
    BOOL,
    DOUBLE,
    I64,
    REPEATED,
    STRING,
    Field,
    file_descriptor,
    message_class,
    pool_of,
)

P = ".openapi.v2."
# gnostic's OpenAPIv2.proto, the messages and fields this server writes.
MESSAGES: dict[str, list[Field]] = {
    "openapi.v2.Document": [
        ("swagger", 1, STRING, ""),
        ("info", 2, P + "Info", ""),
        ("paths", 8, P + "Paths", ""),
        ("definitions", 9, P + "Definitions", ""),
        ("parameters", 10, P + "ParameterDefinitions", ""),
        ("security", 12, P + "SecurityRequirement", REPEATED),
        ("security_definitions", 13, P + "SecurityDefinitions", ""),
    ],
    "openapi.v2.Info": [("title", 1, STRING, ""), ("version", 2, STRING, "")],
    "openapi.v2.Paths": [("path", 2, P + "NamedPathItem", REPEATED)],
    "openapi.v2.NamedPathItem": [("name", 1, STRING, ""), ("value", 2, P + "PathItem", "")],
    "openapi.v2.PathItem": [
        *[(m, n, P + "Operation", "") for m, n in (("get", 2), ("put", 3), ("post", 4))],
        *[(m, n, P + "Operation", "") for m, n in (("delete", 5), ("patch", 8))],
        ("parameters", 9, P + "ParametersItem", REPEATED),
    ],
    "openapi.v2.Operation": [
        ("tags", 1, STRING, REPEATED),
        ("description", 3, STRING, ""),
        ("operation_id", 5, STRING, ""),
        ("produces", 6, STRING, REPEATED),
        ("consumes", 7, STRING, REPEATED),
        ("parameters", 8, P + "ParametersItem", REPEATED),
        ("responses", 9, P + "Responses", ""),
        ("schemes", 10, STRING, REPEATED),
        ("vendor_extension", 13, P + "NamedAny", REPEATED),
    ],
    "openapi.v2.ParametersItem": [
        ("parameter", 1, P + "Parameter", "oneof"),
        ("json_reference", 2, P + "JsonReference", "oneof"),
    ],
    "openapi.v2.JsonReference": [("_ref", 1, STRING, "")],
    "openapi.v2.Parameter": [
        ("body_parameter", 1, P + "BodyParameter", "oneof"),
        ("non_body_parameter", 2, P + "NonBodyParameter", "oneof"),
    ],
    "openapi.v2.BodyParameter": [
        ("name", 2, STRING, ""),
        ("in", 3, STRING, ""),
        ("required", 4, BOOL, ""),
        ("schema", 5, P + "Schema", ""),
    ],
    "openapi.v2.NonBodyParameter": [
        ("query_parameter_sub_schema", 3, P + "QueryParameterSubSchema", "oneof"),
        ("path_parameter_sub_schema", 4, P + "PathParameterSubSchema", "oneof"),
    ],
    "openapi.v2.QueryParameterSubSchema": [
        ("in", 2, STRING, ""),
        ("description", 3, STRING, ""),
        ("name", 4, STRING, ""),
        ("type", 6, STRING, ""),
        ("unique_items", 20, BOOL, ""),
    ],
    "openapi.v2.PathParameterSubSchema": [
        ("required", 1, BOOL, ""),
        ("in", 2, STRING, ""),
        ("description", 3, STRING, ""),
        ("name", 4, STRING, ""),
        ("type", 5, STRING, ""),
        ("unique_items", 19, BOOL, ""),
    ],
    "openapi.v2.Responses": [("response_code", 1, P + "NamedResponseValue", REPEATED)],
    "openapi.v2.NamedResponseValue": [
        ("name", 1, STRING, ""),
        ("value", 2, P + "ResponseValue", ""),
    ],
    "openapi.v2.ResponseValue": [("response", 1, P + "Response", "oneof")],
    "openapi.v2.Response": [("description", 1, STRING, ""), ("schema", 2, P + "SchemaItem", "")],
    "openapi.v2.SchemaItem": [("schema", 1, P + "Schema", "oneof")],
    "openapi.v2.ParameterDefinitions": [
        ("additional_properties", 1, P + "NamedParameter", REPEATED)
    ],
    "openapi.v2.NamedParameter": [("name", 1, STRING, ""), ("value", 2, P + "Parameter", "")],
    "openapi.v2.SecurityRequirement": [
        ("additional_properties", 1, P + "NamedStringArray", REPEATED)
    ],
    "openapi.v2.NamedStringArray": [("name", 1, STRING, ""), ("value", 2, P + "StringArray", "")],
    "openapi.v2.StringArray": [("value", 1, STRING, REPEATED)],
    "openapi.v2.SecurityDefinitions": [
        ("additional_properties", 1, P + "NamedSecurityDefinitionsItem", REPEATED)
    ],
    "openapi.v2.NamedSecurityDefinitionsItem": [
        ("name", 1, STRING, ""),
        ("value", 2, P + "SecurityDefinitionsItem", ""),
    ],
    "openapi.v2.SecurityDefinitionsItem": [("api_key_security", 2, P + "ApiKeySecurity", "oneof")],
    "openapi.v2.ApiKeySecurity": [
        ("type", 1, STRING, ""),
        ("name", 2, STRING, ""),
        ("in", 3, STRING, ""),
        ("description", 4, STRING, ""),
    ],
    "openapi.v2.Definitions": [("additional_properties", 1, P + "NamedSchema", REPEATED)],
    "openapi.v2.NamedSchema": [("name", 1, STRING, ""), ("value", 2, P + "Schema", "")],
    "openapi.v2.Any": [("yaml", 2, STRING, "")],
    "openapi.v2.NamedAny": [("name", 1, STRING, ""), ("value", 2, P + "Any", "")],
    "openapi.v2.TypeItem": [("value", 1, STRING, REPEATED)],
    "openapi.v2.ItemsItem": [("schema", 1, P + "Schema", REPEATED)],
    "openapi.v2.Properties": [("additional_properties", 1, P + "NamedSchema", REPEATED)],
    "openapi.v2.AdditionalPropertiesItem": [
        ("schema", 1, P + "Schema", "oneof"),
        ("boolean", 2, BOOL, "oneof"),
    ],
    "openapi.v2.Schema": [
        ("_ref", 1, STRING, ""),
        ("format", 2, STRING, ""),
        ("description", 4, STRING, ""),
        ("default", 5, P + "Any", ""),
        ("maximum", 7, DOUBLE, ""),
        ("minimum", 9, DOUBLE, ""),
        ("max_length", 11, I64, ""),
        ("pattern", 13, STRING, ""),
        ("unique_items", 16, BOOL, ""),
        ("required", 19, STRING, REPEATED),
        ("enum", 20, P + "Any", REPEATED),
        ("additional_properties", 21, P + "AdditionalPropertiesItem", ""),
        ("type", 22, P + "TypeItem", ""),
        ("items", 23, P + "ItemsItem", ""),
        ("all_of", 24, P + "Schema", REPEATED),
        ("properties", 25, P + "Properties", ""),
        ("read_only", 27, BOOL, ""),
        ("vendor_extension", 31, P + "NamedAny", REPEATED),
    ],
}
DOCUMENT = message_class(pool_of(file_descriptor("openapi.v2", MESSAGES)), "openapi.v2.Document")


def decoded(doc: dict[str, Any]) -> dict[str, Any]:
    message = DOCUMENT()
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
    assert [p["name"] for p in out["paths"]["path"]] == list(json_doc["paths"])
    shared = {p["name"]: p["value"] for p in out["parameters"]["additional_properties"]}
    assert list(shared) == list(json_doc["parameters"])
    assert shared["namespace-vgWSWtn3"] == {
        "non_body_parameter": {
            "path_parameter_sub_schema": {
                "required": True,
                "in": "path",
                "description": "object name and auth scope, such as for teams and projects",
                "name": "namespace",
                "type": "string",
                "unique_items": True,
            }
        }
    }
    (security,) = out["security"]
    assert security == {"additional_properties": [{"name": "BearerToken", "value": {}}]}
    (bearer,) = out["security_definitions"]["additional_properties"]
    assert bearer["value"]["api_key_security"]["in"] == "header"


def test_an_operation_reads_back_as_gnostic_compiles_it() -> None:
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    out = decoded(orjson.loads(OpenAPI(scheme).v2_document()))
    items = {p["name"]: p["value"] for p in out["paths"]["path"]}
    leases = items["/apis/coordination.platform.io/v1/namespaces/{namespace}/leases/{name}"]
    assert leases["parameters"][0]["parameter"] == {
        "non_body_parameter": {
            "path_parameter_sub_schema": {
                "required": True,
                "in": "path",
                "description": "name of the Lease",
                "name": "name",
                "type": "string",
                "unique_items": True,
            }
        }
    }
    assert leases["parameters"][1] == {
        "json_reference": {"_ref": "#/parameters/namespace-vgWSWtn3"}
    }
    put = leases["put"]
    assert (put["operation_id"], put["tags"], put["consumes"], put["schemes"]) == (
        "replaceCoordinationV1NamespacedLease",
        ["coordination_v1"],
        ["*/*"],
        ["https"],
    )
    assert put["parameters"][0]["parameter"] == {
        "body_parameter": {
            "name": "body",
            "in": "body",
            "required": True,
            "schema": {"_ref": "#/definitions/io.platform.api.coordination.v1.Lease"},
        }
    }
    codes = {r["name"]: r["value"]["response"] for r in put["responses"]["response_code"]}
    assert codes["401"] == {"description": "Unauthorized"}
    assert codes["201"] == {
        "description": "Created",
        "schema": {"schema": {"_ref": "#/definitions/io.platform.api.coordination.v1.Lease"}},
    }
    extensions = {e["name"]: yaml.safe_load(e["value"]["yaml"]) for e in put["vendor_extension"]}
    assert extensions == {
        "x-kubernetes-action": "put",
        "x-kubernetes-group-version-kind": {
            "group": "coordination.platform.io",
            "kind": "Lease",
            "version": "v1",
        },
    }


def test_negotiation_is_kube_openapis() -> None:
    pb, old = openapiproto.MEDIA_TYPE, openapiproto.DEPRECATED_MEDIA_TYPE
    assert openapiproto.negotiate([pb]) == "protobuf"
    assert openapiproto.negotiate([old]) == "protobuf"
    assert openapiproto.negotiate(["*/*"]) == "json"
    assert openapiproto.negotiate(["application/yaml", pb]) == "protobuf"
    assert openapiproto.negotiate(["application/yaml", "text/html"]) is None
