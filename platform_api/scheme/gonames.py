"""How Go's decoders name a type mismatch: the error kube returns for a value of the
wrong JSON (or CBOR) type, with the Go type and field path kube's typed decoding names.

The schema knows a field's JSON type; Go's message names the struct's field path (with
the embedded structs a field is promoted through) and its Go type (named types such as
``v1.ServiceType`` included), which the Protobuf descriptors know (protobuf_schema).
"""

from __future__ import annotations

import re
from typing import Any

from platform_api.codec import protobuf_schema
from platform_api.gotext import go_type, json_kind, marshal
from platform_api.scheme.schemas import INT_OR_STRING, Node, Schemas

_INDEX = re.compile(r"\[[^\]]*\]")
_SEGMENT = re.compile(r"([^.\[\]]+)|(\[[^\]]*\])")  # a path's keys and [indices]


class DecodeError(ValueError):
    """A fatal type error, worded as Go's ``encoding/json`` (or kube's CBOR decoder).
    A type error also keeps the ``value`` and the Go ``kind`` it should have had
    (``struct``, ``slice``, ``map`` or a scalar's: ``string``, ``int32``...), which kube's
    unstructured converter words otherwise (``converter_problem``)."""

    def __init__(self, message: str, value: Any = None, kind: str = "", go_type: str = "") -> None:
        super().__init__(message)
        self.value, self.kind, self.go_type = value, kind, go_type

    def converter_problem(self) -> str:
        """The error of kube's DefaultUnstructuredConverter for the same mismatch (a
        strategic merge patch's result goes through it), else this error's text."""
        source = _source_kind(self.value)
        if self.kind in ("struct", "slice", "map"):
            colon = ":" if self.kind == "struct" else ""
            return f"cannot restore {self.kind} from{colon} {source}"
        if self.kind == "base64":  # the converter decodes []byte text with encoding/json
            return f"error decoding from json: {self}"
        if self.kind == "intstr":  # IntOrString's UnmarshalJSON, given the value as JSON
            kind = json_kind(self.value)
            if kind == "number":
                kind = f"number {marshal(self.value)}"
            return f"json: cannot unmarshal {kind} into Go value of type int32"
        if not self.kind:
            return str(self)
        if source == "int64" and self.kind == "string":
            return f"cannot convert int64 to {self.go_type}"
        if source == "float64" and self.kind.startswith(("int", "uint")):
            return f"cannot convert float64 to {self.kind}"  # a fraction: no whole number
        return f"unrecognized type: {self.kind}"


def _source_kind(value: Any) -> str:
    """The reflect kind of a decoded JSON value in Go (``%T`` but for the containers)."""
    named = go_type(value)
    return {"map[string]interface {}": "map", "[]interface {}": "slice"}.get(named, named)


def _cbor_type(value: Any) -> str:
    """fxamacker/cbor's name of the CBOR type a value came as (strings: client-go's)."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return "primitives"
    if isinstance(value, int):
        return "positive integer" if value >= 0 else "negative integer"
    if isinstance(value, str):
        return "byte string"
    return "array" if isinstance(value, list) else "map"


class GoNames:
    """Names the mismatches met decoding one object of definition ``root``."""

    def __init__(self, schemas: Schemas, root: str, cbor: bool) -> None:
        self.schemas, self.root, self.cbor = schemas, root, cbor

    def type_error(
        self,
        value: Any,
        path: str,
        struct: str,
        go_type: str,
        num: bool = False,
        kind: str = "",
    ) -> DecodeError:
        """``struct`` is package-qualified (``v1.ConfigMap``): CBOR names it so, JSON not.
        ``kind``: the Go kind the field has (DecodeError), when the converter words it."""
        go_type = self.named_type(path) or go_type
        go_path = self.go_path(path)
        if self.cbor:
            where = f"Go struct field {struct}.{go_path}"
            return DecodeError(
                f"cbor: cannot unmarshal {_cbor_type(value)} into {where} of type {go_type}"
            )
        go_kind, kind = kind, json_kind(value)
        if num and kind == "number":
            kind = f"number {getattr(value, 'literal', value)}"  # 1e400 as it was written
        where = f"Go struct field {struct.rpartition('.')[2]}.{go_path}"
        message = f"json: cannot unmarshal {kind} into {where} of type {go_type}"
        return DecodeError(message, value, go_kind, go_type)

    def go_path(self, path: str) -> str:
        """The field path Go's decoder names: fields only (no list indices or map keys),
        with the embedded structs a field is promoted through (a Probe's
        ``ProbeHandler.httpGet``, a Volume's ``VolumeSource.emptyDir``)."""
        if self.root not in self.schemas.definitions:
            return _INDEX.sub("", path)
        node: Node = {"$ref": self.root}
        parts: list[str] = []
        for key, index in _SEGMENT.findall(path):
            ref, node = self.schemas.resolve(node)
            if index:
                node = node.get("items") or node.get("additionalProperties") or {}
                continue
            props = node.get("properties") or {}
            message = protobuf_schema.message_of_definition(ref) if ref else None
            if key in props and message is not None:
                parts.extend(protobuf_schema.embedded_path(message, key))
            parts.append(key)
            node = props.get(key) or node.get("additionalProperties") or {}
        return ".".join(parts)

    def named_type(self, path: str) -> str | None:
        """The Go type of a built-in field of a named type (``v1.ServiceType``, an item of
        ``[]v1.IPFamily``), which the schema does not know: found from the field's struct,
        reached by walking the schema from the root along ``path``."""
        if self.root not in self.schemas.definitions:
            return None
        node: Node = {"$ref": self.root}  # resolved in the walk: a top field's owner is it
        owner, name, item = "", "", False
        for key, index in _SEGMENT.findall(path):
            ref, node = self.schemas.resolve(node)
            if index:
                node, item = node.get("items") or node.get("additionalProperties") or {}, True
                continue
            props = node.get("properties") or {}
            if key in props:
                owner, name, item, node = ref, key, False, props[key]
            else:
                owner, node = "", node.get("additionalProperties") or {}  # a map's value
        message = protobuf_schema.message_of_definition(owner) if owner else None
        if message:
            message = protobuf_schema.field_owner(message, name)
        named = protobuf_schema.go_type(message, name) if message else None
        if named is None or not item:
            return named
        return named[2:] if named.startswith("[]") else None

    def go_type(self, node: Node) -> str:
        ref, _ = self.schemas.resolve(node)
        if ref == INT_OR_STRING:
            return "intstr.IntOrString"
        if ref:
            package, name = ref.rsplit(".", 2)[-2:]
            return f"{package}.{name}"
        kind = node.get("type")
        if kind == "array":
            return "[]" + self.go_type(node.get("items", {}))
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return "map[string]" + self.go_type(extra)
            return "map[string]interface {}"
        if kind == "integer":
            return node.get("format", "int")
        if kind == "number":
            return "float64"
        if kind == "boolean":
            return "bool"
        if node.get("format") == "byte":
            return "[]uint8"  # Go's []byte, as its JSON decoder names it
        return "string"
