"""/openapi/v2 as Protobuf: gnostic's ``openapi_v2.Document``, as kube-openapi serves it.

client-go's ``Discovery().OpenAPISchema()`` asks for nothing else (no JSON fallback), and
``kubectl explain --output=plaintext-openapiv2``, ``kubectl``'s older validation, Argo CD and
Helm's schema checks read it.  kube marshals what gnostic compiles from the JSON document;
this writes the same messages from the JSON document's dict directly: fields in field
number order, proto3 zero values left out, and every value gnostic keeps as YAML
(``default``, ``enum``, ``example``, ``x-*`` extensions) as its JSON text, which is YAML.
Only the parts this server's document has are written: info, paths, definitions, the
shared parameters and the bearer-token security.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import orjson

from platform_api.codec.protobuf_values import varint

Obj = dict[str, Any]
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
DEPRECATED_MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _message(number: int, body: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(body)) + body


def _string(number: int, value: Any) -> bytes:
    return _message(number, str(value).encode()) if value else b""


def _strings(number: int, values: Any) -> bytes:
    return b"".join(_message(number, str(v).encode()) for v in values or ())


def _bool(number: int, value: Any) -> bytes:
    return varint(number << 3) + b"\x01" if value is True else b""


def _int(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value:
        return b""
    return varint(number << 3) + varint(int(value))


def _double(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value:
        return b""
    return varint(number << 3 | 1) + struct.pack("<d", float(value))


def _any(number: int, value: Any) -> bytes:
    """gnostic's ``Any``: the value's YAML (JSON text is YAML) in field 2."""
    return _message(number, _message(2, orjson.dumps(value) + b"\n"))


def _extensions(number: int, node: Obj) -> bytes:
    return b"".join(
        _message(number, _message(1, key.encode()) + _any(2, value))
        for key, value in node.items()
        if key.startswith("x-")
    )


def _additional_properties(number: int, value: Any) -> bytes:
    if isinstance(value, bool):  # a oneof member: written even when false
        return _message(number, varint(2 << 3) + (b"\x01" if value else b"\x00"))
    if isinstance(value, dict):
        return _message(number, _message(1, schema(value)))
    return b""


def _type(number: int, value: Any) -> bytes:
    values = value if isinstance(value, list) else [value] if value else []
    return _message(number, _strings(1, values)) if values else b""


def _items(number: int, value: Any) -> bytes:
    schemas = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    body = b"".join(_message(1, schema(s)) for s in schemas if isinstance(s, dict))
    return _message(number, body) if schemas else b""


def _all_of(number: int, value: Any) -> bytes:
    return b"".join(_message(number, schema(s)) for s in value or () if isinstance(s, dict))


def _properties(number: int, value: Any) -> bytes:
    if not isinstance(value, dict):
        return b""
    return _message(number, _named_schemas(1, value))


def _enum(number: int, value: Any) -> bytes:
    return b"".join(_any(number, v) for v in value or ())


def _external_docs(number: int, value: Any) -> bytes:
    if not isinstance(value, dict):
        return b""
    return _message(number, _string(1, value.get("description")) + _string(2, value.get("url")))


# gnostic's Schema, in field number order: (JSON key, field number, writer).
_SCHEMA: tuple[tuple[str, int, Callable[[int, Any], bytes]], ...] = (
    ("$ref", 1, _string),
    ("format", 2, _string),
    ("title", 3, _string),
    ("description", 4, _string),
    ("default", 5, _any),
    ("multipleOf", 6, _double),
    ("maximum", 7, _double),
    ("exclusiveMaximum", 8, _bool),
    ("minimum", 9, _double),
    ("exclusiveMinimum", 10, _bool),
    ("maxLength", 11, _int),
    ("minLength", 12, _int),
    ("pattern", 13, _string),
    ("maxItems", 14, _int),
    ("minItems", 15, _int),
    ("uniqueItems", 16, _bool),
    ("maxProperties", 17, _int),
    ("minProperties", 18, _int),
    ("required", 19, _strings),
    ("enum", 20, _enum),
    ("additionalProperties", 21, _additional_properties),
    ("type", 22, _type),
    ("items", 23, _items),
    ("allOf", 24, _all_of),
    ("properties", 25, _properties),
    ("discriminator", 26, _string),
    ("readOnly", 27, _bool),
    ("externalDocs", 29, _external_docs),
    ("example", 30, _any),
)


def schema(node: Obj) -> bytes:
    """One ``openapi_v2.Schema``."""
    out = [write(number, node[key]) for key, number, write in _SCHEMA if key in node]
    out.append(_extensions(31, node))
    return b"".join(out)


def _named_schemas(number: int, schemas: Obj) -> bytes:
    return b"".join(
        _message(number, _message(1, name.encode()) + _message(2, schema(node)))
        for name, node in schemas.items()
        if isinstance(node, dict)
    )


def negotiate(accepted: list[str]) -> str | None:
    """kube-openapi's choice for /openapi/v2: the first Accept clause (by quality) that
    JSON or either Protobuf name matches, JSON first; None: 406."""
    for media in accepted:
        kind, _, sub = media.partition("/")
        if kind not in ("application", "*"):
            continue
        if sub in ("json", "*"):
            return "json"
        if media in (MEDIA_TYPE, DEPRECATED_MEDIA_TYPE):
            return "protobuf"
    return None


# A non-body parameter's fields in its sub-schema (gnostic numbers them apart for
# each place): where it is -> (NonBodyParameter field, required, in, description, name,
# type, uniqueItems)
_NON_BODY = {
    "header": (1, 1, 2, 3, 4, 5, 19),
    "formData": (2, 1, 2, 3, 4, 6, 20),
    "query": (3, 1, 2, 3, 4, 6, 20),
    "path": (4, 1, 2, 3, 4, 5, 19),
}


def _parameter(p: Obj) -> bytes:
    """One ``Parameter`` (a body or a non-body one)."""
    if p.get("in") == "body":
        body = (
            _string(1, p.get("description"))
            + _string(2, p.get("name"))
            + _string(3, p.get("in"))
            + _bool(4, p.get("required"))
            + (_message(5, schema(p["schema"])) if isinstance(p.get("schema"), dict) else b"")
            + _extensions(6, p)
        )
        return _message(1, body)
    where, required, in_, description, name, kind, unique = _NON_BODY[str(p.get("in"))]
    sub = (
        _bool(required, p.get("required"))
        + _string(in_, p.get("in"))
        + _string(description, p.get("description"))
        + _string(name, p.get("name"))
        + _string(kind, p.get("type"))
        + _bool(unique, p.get("uniqueItems"))
    )
    return _message(2, _message(where, sub))


def _parameters_item(number: int, p: Obj) -> bytes:
    """A ``ParametersItem``: a reference or a parameter."""
    if "$ref" in p:
        return _message(number, _message(2, _string(1, p["$ref"])))
    return _message(number, _message(1, _parameter(p)))


def _responses(number: int, responses: Obj) -> bytes:
    body = b""
    for code, response in responses.items():
        answer = _string(1, response.get("description"))
        if isinstance(response.get("schema"), dict):
            answer += _message(2, _message(1, schema(response["schema"])))
        body += _message(1, _string(1, code) + _message(2, _message(1, answer)))
    return _message(number, body)


def _operation(op: Obj) -> bytes:
    return b"".join(
        (
            _strings(1, op.get("tags")),
            _string(3, op.get("description")),
            _string(5, op.get("operationId")),
            _strings(6, op.get("produces")),
            _strings(7, op.get("consumes")),
            b"".join(_parameters_item(8, p) for p in op.get("parameters", ())),
            _responses(9, op.get("responses") or {}),
            _strings(10, op.get("schemes")),
            _extensions(13, op),
        )
    )


_OPERATIONS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: Obj) -> bytes:
    ops = sorted((_OPERATIONS[m], op) for m, op in item.items() if m in _OPERATIONS)
    return b"".join(_message(number, _operation(op)) for number, op in ops) + b"".join(
        _parameters_item(9, p) for p in item.get("parameters", ())
    )


def _paths(paths: Obj) -> bytes:
    return b"".join(
        _message(2, _string(1, path) + _message(2, _path_item(item)))
        for path, item in paths.items()
    )


def _security(doc: Obj) -> bytes:
    """The requirements (field 12) and definitions (13): API keys are all kube has."""
    out = b""
    for requirement in doc.get("security") or ():
        named = b"".join(
            _message(1, _string(1, name) + _message(2, _strings(1, scopes)))
            for name, scopes in requirement.items()
        )
        out += _message(12, named)
    definitions = doc.get("securityDefinitions") or {}
    if definitions:
        items = b""
        for name, d in definitions.items():
            key = _string(1, d.get("type")) + _string(2, d.get("name")) + _string(3, d.get("in"))
            key += _string(4, d.get("description"))
            items += _message(1, _string(1, name) + _message(2, _message(2, key)))
        out += _message(13, items)
    return out


def document(doc: Obj) -> bytes:
    """The ``openapi_v2.Document`` of a JSON v2 document."""
    info = doc.get("info") or {}
    parameters = b"".join(
        _message(1, _string(1, name) + _message(2, _parameter(p)))
        for name, p in (doc.get("parameters") or {}).items()
    )
    return b"".join(
        (
            _string(1, doc.get("swagger")),
            _message(2, _string(1, info.get("title")) + _string(2, info.get("version"))),
            _message(8, _paths(doc.get("paths") or {})),
            _message(9, _named_schemas(1, doc.get("definitions") or {})),
            _message(10, parameters) if parameters else b"",
            _security(doc),
        )
    )
