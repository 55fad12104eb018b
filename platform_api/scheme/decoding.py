"""Decode a parsed body against its kind's schema, as kube's typed decoding does.

Go decodes a request into typed structs: fields the struct lacks are dropped (and
reported as unknown), duplicates are reported, a value of the wrong JSON type is a
fatal error, ``null`` means "absent", and times are re-rendered in their canonical
form.  This module reproduces that on plain dicts, driven by the OpenAPI schema, so
what is stored is exactly what kube would store.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from platform_api import gotime
from platform_api.codec import Duplicates, gobase64
from platform_api.quantity import QuantityError, canonical, resource_list_text
from platform_api.scheme.gonames import DecodeError, GoNames
from platform_api.scheme.schemas import (
    FIELDS_V1,
    INT_OR_STRING,
    MICRO_TIME,
    QUANTITY,
    RAW_EXTENSION,
    TIME,
    Node,
    Schemas,
)
from platform_api.timestamps import format_time

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


@dataclass
class Decoded:
    obj: dict[str, Any]
    unknown: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    # Both kinds of problem in the order the body holds them, when the decoder knows it.
    in_order: list[str] | None = None
    # CBOR bodies: where the first unknown field sat in its map (kube's CBOR decoder
    # reports only that one, by position; duplicates were refused while parsing).
    cbor_unknown_at: int | None = None

    def strict_errors(self) -> list[str]:
        """``unknown field "x"`` / ``duplicate field "y"``, in the body's order as kube's
        strict decoder meets them (duplicates first when the order is not known)."""
        if self.cbor_unknown_at is not None:
            return [f"cbor: found unknown field at map element index {self.cbor_unknown_at}"]
        if self.in_order is not None:
            return self.in_order
        out = [f'duplicate field "{p}"' for p in self.duplicates]
        return out + [f'unknown field "{p}"' for p in self.unknown]


@functools.lru_cache(maxsize=256)
def _canonical_time(text: str, micro: bool) -> str:
    """A body's timestamp as Go writes it back; cached, as updates resend the same few."""
    return format_time(parse_time(text, micro), micro=micro)


def parse_time(text: str, micro: bool = False) -> datetime:
    """A metav1.Time (``micro``: MicroTime) as kube's JSON decoding reads it."""
    try:
        return gotime.parse(text, micro)
    except gotime.TimeParseError as e:
        raise DecodeError(str(e)) from None


class Decoder:
    """Walks one object against one schema; create one per body.  ``cbor``: the body
    came as CBOR, whose errors kube words differently.  ``keep_nulls``: a struct field
    given null keeps its null (an applied configuration, which kube hands the field
    manager as JSON: a null there claims the field and clears it), where Go's decoder
    leaves the field zero."""

    def __init__(
        self,
        schemas: Schemas,
        duplicates: Duplicates | None = None,
        cbor: bool = False,
        keep_nulls: bool = False,
        as_written: bool = False,
    ) -> None:
        self.schemas = schemas
        # quantities kept as written (checked all the same): an applied configuration,
        # compared as kube's field manager compares it, "1024Mi" apart from "1Gi"
        self.as_written = as_written
        self.dups = duplicates or {}
        self.cbor = cbor
        self.keep_nulls = keep_nulls
        self.unknown: list[str] = []
        self.duplicates: list[str] = []
        self.in_order: list[str] = []
        self.first_unknown_at: int | None = None
        self.names = GoNames(schemas, "", cbor)  # of the definition being decoded
        self.saved: DecodeError | None = None  # the first plain type mismatch

    def _mismatch(self, error: DecodeError) -> Any:
        """A plain type mismatch: Go's JSON decoder saves the first, leaves the field zero
        and decodes on, so a custom unmarshaler's error met later (a quantity, a time, an
        int-or-string) ends the decode and is the one reported; else the saved one is,
        once the whole object is read.  (CBOR's decoder: at once, as before.)"""
        if self.cbor:
            raise error
        if self.saved is None:
            self.saved = error
        return None  # the field's value: dropped (the saved error ends the decode)

    def decode(self, obj: dict[str, Any], definition: str) -> Decoded:
        self.names = GoNames(self.schemas, definition, self.cbor)
        root = self.schemas.get(definition)
        out = self._object(obj, root, "", _struct(definition))
        if self.saved is not None:
            raise self.saved
        at = self.first_unknown_at if self.cbor else None
        return Decoded(out, self.unknown, self.duplicates, self.in_order, at)

    # -- walking ----------------------------------------------------------------------

    def _value(self, value: Any, node: Node, path: str, struct: str) -> Any:
        ref, target = self.schemas.resolve(node)
        if ref == RAW_EXTENSION or (ref == FIELDS_V1 and not self.cbor):
            # raw JSON of any kind, kept as sent (validation judges it; the field
            # manager reads managedFields, and passes over what it cannot read)
            return value
        if ref == INT_OR_STRING:
            if isinstance(value, str):
                return value
            integer = isinstance(value, int) and not isinstance(value, bool)
            if self.cbor:
                if integer:
                    return value
                raise self.names.type_error(value, path, struct, "intstr.IntOrString")
            # Go's IntOrString.UnmarshalJSON reads anything but a string as its int32
            if not integer or not _INT32[0] <= value <= _INT32[1]:
                raise self.names.type_error(value, path, struct, "int32", True, "intstr")
            return value
        if ref == QUANTITY:
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                text = _quantity(value.strip() if isinstance(value, str) else _number_text(value))
                return value if self.as_written and isinstance(value, str) else text
            if not self.cbor:  # Go's Quantity.UnmarshalJSON parses any other JSON as text
                _quantity(json.dumps(value, separators=(",", ":")))
            raise self.names.type_error(value, path, struct, "resource.Quantity")
        if ref.endswith(_SCHEMA_OR):  # a schema, or a list of schemas, a boolean, strings
            return self._schema_or(value, ref, path, struct)
        if ref in (TIME, MICRO_TIME):
            if not isinstance(value, str):
                # Time.UnmarshalJSON reads the value into a string first
                go = "v1." + ref.rsplit(".", 1)[-1] if self.cbor else "string"
                raise self.names.type_error(value, path, struct, go)
            return _canonical_time(value, ref == MICRO_TIME)
        if ref:
            if target.get("type") == "object" or "properties" in target:
                if not isinstance(value, dict):
                    return self._mismatch(
                        self.names.type_error(
                            value, path, struct, self.names.go_type(node), kind="struct"
                        )
                    )
                return self._object(value, target, path, _struct(ref))
            return self._value(value, target, path, struct)
        return self._plain(value, node, path, struct)

    def _schema_or(self, value: Any, ref: str, path: str, struct: str) -> Any:
        """The UnmarshalJSON of a JSONSchemaPropsOr{Array,Bool,StringArray}: an object is a
        schema; an array is schemas or strings, a boolean is itself; anything else is no
        value at all (an error for OrBool).  Each reads its part with a json.Unmarshal of
        its own and returns the first mismatch, an unmarshaler's error: it ends the outer
        decode at once."""
        base, _, alternative = ref.rpartition("Or")
        schema = {"$ref": base}
        if alternative == "Bool":
            if isinstance(value, bool):
                return value
            if not isinstance(value, dict):
                raise DecodeError("boolean or JSON schema expected")
        elif not isinstance(value, dict | list) and not self.cbor:
            return None
        outer, self.saved = self.saved, None
        if isinstance(value, list):
            item = _STRING if alternative == "StringArray" else schema
            decoded: Any = [self._value(v, item, path, struct) for v in value]
        else:
            decoded = self._value(value, schema, path, struct)
        inner, self.saved = self.saved, outer
        if inner is not None:
            raise inner
        return decoded

    def _plain(self, value: Any, node: Node, path: str, struct: str) -> Any:
        kind = node.get("type")
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            return self._object(value, node, path, struct)
        if kind == "array":
            if not isinstance(value, list):
                return self._mismatch(
                    self.names.type_error(
                        value, path, struct, self.names.go_type(node), kind="slice"
                    )
                )
            items = node.get("items", {})
            return [self._item(item, items, f"{path}[{i}]", struct) for i, item in enumerate(value)]
        if kind == "string":
            if node.get("format") == "byte":
                return self._bytes(value, path, struct)
            if not isinstance(value, str):
                return self._mismatch(
                    self.names.type_error(value, path, struct, "string", kind="string")
                )
            return value
        if kind == "integer":
            int_kind = node.get("format", "int")
            low, high = _INT32 if node.get("format") == "int32" else _INT64
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                return self._mismatch(
                    self.names.type_error(value, path, struct, int_kind, True, int_kind)
                )
            return value
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return self._mismatch(
                    self.names.type_error(value, path, struct, "float64", kind="float64")
                )
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                return self._mismatch(
                    self.names.type_error(value, path, struct, "bool", kind="bool")
                )
            return value
        return value  # untyped: any JSON value (RawExtension-style)

    def _bytes(self, value: Any, path: str, struct: str) -> str | None:
        """Go's ``[]byte``: base64 text, or, being a slice, an array of numbers 0-255."""
        if isinstance(value, str):
            return _canonical_base64(value)
        if not isinstance(value, list):
            return self._mismatch(
                self.names.type_error(value, path, struct, "[]uint8", kind="slice")
            )
        value = [0 if item is None else item for item in value]  # null: the zero byte
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= 255:
                return self._mismatch(
                    self.names.type_error(item, path, struct, "uint8", True, "uint8")
                )
        return base64.b64encode(bytes(value)).decode()

    def _item(self, value: Any, node: Node, path: str, struct: str) -> Any:
        """A list item or map value: Go decodes a null one as its type's zero value (a
        null container is a container with every field empty, refused by validation)."""
        if value is None:
            value = self._zero(node)
            if value is None:
                return None
        return self._value(value, node, path, struct)

    def _zero(self, node: Node) -> Any:
        """The JSON of a Go zero value of ``node``'s type; None where Go writes null
        (slices, maps, pointers, times, free-form values)."""
        ref, target = self.schemas.resolve(node)
        if ref == INT_OR_STRING:
            return 0
        if ref == QUANTITY:
            return "0"
        if ref in (TIME, MICRO_TIME) or ref.endswith(".JSONSchemaPropsOrArray"):
            return None
        if ref:
            return {} if "properties" in target else self._zero(target)
        if "properties" in node:
            return {}
        if node.get("format") == "byte":
            return None  # a nil []byte
        return _ZEROS.get(node.get("type", ""))

    def _object(self, value: Any, node: Node, path: str, struct: str) -> Any:
        if not isinstance(value, dict):
            where = path or struct.rpartition(".")[2]
            kind = "struct" if "properties" in node else "map"
            return self._mismatch(
                self.names.type_error(value, where, struct, self.names.go_type(node), kind=kind)
            )
        repeats = list(self.dups.get(id(value), ()))
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if props is None and not isinstance(extra, dict):
            for key, _ in repeats:
                self._duplicate(path, key)
            return value  # free-form object: kept as sent
        out: dict[str, Any] = {}
        # A map of quantities is a ResourceList: kube's defaults round its values to milli.
        resource_list = isinstance(extra, dict) and self.schemas.resolve(extra)[0] == QUANTITY
        for index, (key, item) in enumerate(value.items()):
            while repeats and repeats[0][1] <= index:
                self._duplicate(path, repeats.pop(0)[0])
            child = f"{path}.{key}" if path else key
            if props is not None and key in props:
                if item is not None:
                    decoded = self._value(item, props[key], child, struct)
                    if decoded is not None:  # None: no value (Go leaves the field zero)
                        out[key] = decoded
                elif self.keep_nulls:
                    out[key] = None
            elif isinstance(extra, dict):
                entry = f"{path}[{key}]"
                out[key] = self._item(item, extra, entry, struct)
                if resource_list and isinstance(out[key], str) and not self.as_written:
                    out[key] = resource_list_text(out[key])
            else:
                self.unknown.append(child)
                self.in_order.append(f'unknown field "{child}"')
                if self.first_unknown_at is None:
                    self.first_unknown_at = index
        for key, _ in repeats:
            self._duplicate(path, key)
        return out

    def _duplicate(self, path: str, key: str) -> None:
        """A repeated key, reported where the repeat stood in the body."""
        self.duplicates.append(f"{path}.{key}" if path else key)
        self.in_order.append(f'duplicate field "{self.duplicates[-1]}"')


_ZEROS: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}
_SCHEMA_OR = (".JSONSchemaPropsOrArray", ".JSONSchemaPropsOrBool", ".JSONSchemaPropsOrStringArray")
_STRING: Node = {"type": "string"}


def _struct(definition: str) -> str:
    """A definition's Go type with its package: ``...core.v1.ConfigMap`` is v1.ConfigMap."""
    return ".".join(definition.rsplit(".", 2)[-2:])


def _quantity(text: str) -> str:
    """``resource.Quantity``'s JSON decoding: parsed (kube's message when it does not),
    written back in canonical form (``1000m`` -> ``1``)."""
    try:
        return canonical(text)
    except QuantityError as e:
        raise DecodeError(str(e)) from None


def _number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _canonical_base64(text: str) -> str:
    """``[]byte`` text as Go stores it: decoded by its StdEncoding (which skips line
    breaks and ignores a last character's unused bits), written back canonically.  The
    usual text is matched and mended in C; line breaks and errors take Go's reading."""
    if _CANONICAL_BASE64.fullmatch(text):
        if not text.endswith("="):
            return text
        return base64.b64encode(base64.b64decode(text)).decode()  # unused bits dropped
    try:
        return base64.b64encode(gobase64.decode(text.encode())).decode()
    except gobase64.CorruptInput as e:
        raise DecodeError(str(e), text, "base64") from None


_CANONICAL_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
