"""Bad values as kube renders them: ``json.Marshal`` of apiextensions' *internal* Go types.

kube validates the internal form of a CRD, whose structs carry no JSON tags, so a value
such as ``spec.versions`` reaches the client as ``[{"Name":"v1","Served":true,...}]``:
Go field names in declaration order, every field present (zero values included), maps
with sorted keys, floats in Go's shortest form and ``<``, ``>``, ``&`` escaped.  This
module turns the v1 JSON dicts into that text.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from platform_api.gotext import Struct, marshal
from platform_api.validation.field import GoText

__all__ = ["Struct", "dumps", "text"]

Obj = dict[str, Any]


def dumps(value: Any) -> str:
    """Go's ``json.Marshal`` of a value built from dicts, ``Struct``s, lists and scalars."""
    if not isinstance(value, str | int | float | dict | list | tuple) and value is not None:
        raise TypeError(f"cannot render {type(value).__name__}")
    return marshal(value)


def text(value: Any) -> GoText:
    """A bad value for a FieldError, rendered as kube renders a composite value."""
    return GoText(dumps(value))


# -- the internal types, field by field (Go name, v1 JSON key, kind) ---------------------

_SCHEMA_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("ID", "id", "str"),
    ("Schema", "$schema", "str"),
    ("Ref", "$ref", "ptr"),
    ("Description", "description", "str"),
    ("Type", "type", "str"),
    ("Nullable", "nullable", "bool"),
    ("Format", "format", "str"),
    ("Title", "title", "str"),
    ("Default", "default", "json"),
    ("Maximum", "maximum", "float"),
    ("ExclusiveMaximum", "exclusiveMaximum", "bool"),
    ("Minimum", "minimum", "float"),
    ("ExclusiveMinimum", "exclusiveMinimum", "bool"),
    ("MaxLength", "maxLength", "ptr"),
    ("MinLength", "minLength", "ptr"),
    ("Pattern", "pattern", "str"),
    ("MaxItems", "maxItems", "ptr"),
    ("MinItems", "minItems", "ptr"),
    ("UniqueItems", "uniqueItems", "bool"),
    ("MultipleOf", "multipleOf", "float"),
    ("Enum", "enum", "ptr"),
    ("MaxProperties", "maxProperties", "ptr"),
    ("MinProperties", "minProperties", "ptr"),
    ("Required", "required", "ptr"),
    ("Items", "items", "items"),
    ("AllOf", "allOf", "schemas"),
    ("OneOf", "oneOf", "schemas"),
    ("AnyOf", "anyOf", "schemas"),
    ("Not", "not", "schema"),
    ("Properties", "properties", "schema-map"),
    ("AdditionalProperties", "additionalProperties", "or-bool"),
    ("PatternProperties", "patternProperties", "schema-map"),
    ("Dependencies", "dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems", "or-bool"),
    ("Definitions", "definitions", "schema-map"),
    ("ExternalDocs", "externalDocs", "docs"),
    ("Example", "example", "json"),
    ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields", "ptr"),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource", "bool"),
    ("XIntOrString", "x-kubernetes-int-or-string", "bool"),
    ("XListMapKeys", "x-kubernetes-list-map-keys", "ptr"),
    ("XListType", "x-kubernetes-list-type", "ptr"),
    ("XMapType", "x-kubernetes-map-type", "ptr"),
    ("XValidations", "x-kubernetes-validations", "rules"),
)
# The Go names of JSONSchemaProps' fields by their v1 keys (root-of-schema checks use them).
GO_NAMES = {key: name for name, key, _ in _SCHEMA_FIELDS}


def _field(kind: str, value: Any) -> Any:
    if kind == "str":
        return value if value is not None else ""
    if kind == "bool":
        return bool(value)
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "schema":
        return schema(value)
    if kind == "schemas":
        return [schema(s) for s in value]
    if kind == "schema-map":
        return {k: schema(s) for k, s in value.items()}
    if kind == "items":
        return items(value)
    if kind == "or-bool":
        if isinstance(value, bool):
            return Struct(Allows=value, Schema=None)
        return Struct(Allows=True, Schema=schema(value))
    if kind == "dependencies":
        return {
            k: Struct(Schema=None, Property=list(d))
            if isinstance(d, list)
            else Struct(Schema=schema(d), Property=None)
            for k, d in value.items()
        }
    if kind == "docs":
        return Struct(Description=value.get("description", ""), URL=value.get("url", ""))
    if kind == "rules":
        return [rule(r) for r in value]
    return value  # "ptr" and "json": the value itself


def schema(props: Obj | None) -> Struct | None:
    """Internal ``JSONSchemaProps``."""
    if props is None:
        return None
    return Struct((name, _field(kind, props.get(key))) for name, key, kind in _SCHEMA_FIELDS)


def items(value: Obj | list[Obj]) -> Struct:
    """Internal ``JSONSchemaPropsOrArray``."""
    if isinstance(value, list):
        return Struct(Schema=None, JSONSchemas=[schema(s) for s in value])
    return Struct(Schema=schema(value), JSONSchemas=None)


def rule(value: Obj) -> Struct:
    """Internal ``ValidationRule``."""
    return Struct(
        Rule=value.get("rule", ""),
        Message=value.get("message", ""),
        MessageExpression=value.get("messageExpression", ""),
        Reason=value.get("reason"),
        FieldPath=value.get("fieldPath", ""),
        OptionalOldSelf=value.get("optionalOldSelf"),
    )


def _subresources(value: Obj | None) -> Struct | None:
    if value is None:
        return None
    scale = value.get("scale")
    return Struct(
        Status=None if value.get("status") is None else Struct(),
        Scale=None
        if scale is None
        else Struct(
            SpecReplicasPath=scale.get("specReplicasPath", ""),
            StatusReplicasPath=scale.get("statusReplicasPath", ""),
            LabelSelectorPath=scale.get("labelSelectorPath"),
        ),
    )


def _column(value: Obj) -> Struct:
    return Struct(
        Name=value.get("name", ""),
        Type=value.get("type", ""),
        Format=value.get("format", ""),
        Description=value.get("description", ""),
        Priority=value.get("priority", 0),
        JSONPath=value.get("jsonPath", ""),
    )


def version(value: Obj) -> Struct:
    """Internal ``CustomResourceDefinitionVersion`` (of the internal spec's versions)."""
    validation = value.get("schema")
    columns = value.get("additionalPrinterColumns")
    selectable = value.get("selectableFields")
    return Struct(
        Name=value.get("name", ""),
        Served=bool(value.get("served")),
        Storage=bool(value.get("storage")),
        Deprecated=bool(value.get("deprecated")),
        DeprecationWarning=value.get("deprecationWarning"),
        Schema=None
        if validation is None
        else Struct(OpenAPIV3Schema=schema(validation.get("openAPIV3Schema"))),
        Subresources=_subresources(value.get("subresources")),
        AdditionalPrinterColumns=None if columns is None else [_column(c) for c in columns],
        SelectableFields=None
        if selectable is None
        else [Struct(JSONPath=f.get("jsonPath", "")) for f in selectable],
    )


def ca_bundle(value: str) -> str:
    """A v1 ``caBundle`` as Go marshals ``[]byte``: standard padded base64 of its bytes."""
    return base64.b64encode(decode_ca_bundle(value)).decode()


def decode_ca_bundle(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        return value.encode()
