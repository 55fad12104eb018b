"""Decode a parsed body against its kind's schema, as kube's typed decoding does.

Go decodes a request into typed structs: fields the struct lacks are dropped (and
reported as unknown), duplicates are reported, a value of the wrong JSON type is a
fatal error, ``null`` means "absent", and times are re-rendered in their canonical
form.  This module reproduces that on plain dicts, driven by the OpenAPI schema, so
what is stored is exactly what kube would store.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from platform_api.codec import Duplicates, protobuf_schema
from platform_api.goduration import quote as time_quote
from platform_api.gotext import go_type, json_kind
from platform_api.quantity import QuantityError, canonical, resource_list_text
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
_INDEX = re.compile(r"\[[^\]]*\]")
_SEGMENT = re.compile(r"([^.\[\]]+)|(\[[^\]]*\])")  # a path's keys and [indices]
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)


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
        if not self.kind:
            return str(self)
        if source == "int64" and self.kind == "string":
            return f"cannot convert int64 to {self.go_type}"
        return f"unrecognized type: {self.kind}"


def _source_kind(value: Any) -> str:
    """The reflect kind of a decoded JSON value in Go (``%T`` but for the containers)."""
    named = go_type(value)
    return {"map[string]interface {}": "map", "[]interface {}": "slice"}.get(named, named)


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


def _cbor_type(value: Any) -> str:
    """fxamacker/cbor's name of the CBOR type a value came as (strings: client-go's)."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return "primitives"
    if isinstance(value, int):
        return "positive integer" if value >= 0 else "negative integer"
    if isinstance(value, str):
        return "byte string"
    return "array" if isinstance(value, list) else "map"


@functools.lru_cache(maxsize=256)
def _canonical_time(text: str, micro: bool) -> str:
    """A body's timestamp as Go writes it back; cached, as updates resend the same few."""
    return format_time(parse_time(text), micro=micro)


def parse_time(text: str) -> datetime:
    """RFC 3339 as Go's ``time.Parse(time.RFC3339, ...)`` accepts it."""
    m = _RFC3339.match(text)
    if not m:
        quoted = time_quote(text)  # Go's time.ParseError quotes control and non-ASCII bytes
        raise DecodeError(
            f'parsing time {quoted} as "2006-01-02T15:04:05Z07:00": cannot parse {quoted} as "2006"'
        )
    zone = m.group(8)
    normalized = text[: m.start(7) if m.group(7) else m.start(8)]
    fraction = (m.group(7) or ".0")[1:7].ljust(6, "0")
    tz = "+00:00" if zone in ("Z", "z") else zone
    try:
        return datetime.fromisoformat(f"{normalized.replace('t', 'T')}.{fraction}{tz}")
    except ValueError as e:
        raise DecodeError(f"parsing time {time_quote(text)}: {e}") from e


class Decoder:
    """Walks one object against one schema; create one per body.  ``cbor``: the body
    came as CBOR, whose errors kube words differently."""

    def __init__(
        self, schemas: Schemas, duplicates: Duplicates | None = None, cbor: bool = False
    ) -> None:
        self.schemas = schemas
        self.dups = duplicates or {}
        self.cbor = cbor
        self.unknown: list[str] = []
        self.duplicates: list[str] = []
        self.in_order: list[str] = []
        self.first_unknown_at: int | None = None
        self.root = ""  # the definition being decoded
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
        self.root = definition
        root = self.schemas.get(definition)
        out = self._object(obj, root, "", _struct(definition))
        if self.saved is not None:
            raise self.saved
        at = self.first_unknown_at if self.cbor else None
        return Decoded(out, self.unknown, self.duplicates, self.in_order, at)

    # -- type errors -----------------------------------------------------------------

    def _type_error(
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
        go_type = self._named_type(path) or go_type
        go_path = self._go_path(path)
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

    def _go_path(self, path: str) -> str:
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

    def _named_type(self, path: str) -> str | None:
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
                raise self._type_error(value, path, struct, "intstr.IntOrString")
            # Go's IntOrString.UnmarshalJSON reads anything but a string as its int32
            if not integer or not _INT32[0] <= value <= _INT32[1]:
                raise self._type_error(value, path, struct, "int32", True, "int32")
            return value
        if ref == QUANTITY:
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return _quantity(value.strip() if isinstance(value, str) else _number_text(value))
            if not self.cbor:  # Go's Quantity.UnmarshalJSON parses any other JSON as text
                _quantity(json.dumps(value, separators=(",", ":")))
            raise self._type_error(value, path, struct, "resource.Quantity")
        if ref.endswith(".JSONSchemaPropsOrArray"):  # a schema, or a list of schemas
            props = {"$ref": ref.removesuffix("OrArray")}
            if not isinstance(value, dict | list) and not self.cbor:
                # its UnmarshalJSON reads only an object or an array: anything else is
                # no schema at all (and validation then says one is required)
                return None
            # ... with a json.Unmarshal of its own, whose first mismatch it returns: an
            # unmarshaler's error, which ends the outer decode at once
            outer, self.saved = self.saved, None
            if isinstance(value, list):
                decoded = [self._value(v, props, path, struct) for v in value]
            else:
                decoded = self._value(value, props, path, struct)
            inner, self.saved = self.saved, outer
            if inner is not None:
                raise inner
            return decoded
        if ref in (TIME, MICRO_TIME):
            if not isinstance(value, str):
                # Time.UnmarshalJSON reads the value into a string first
                go = "v1." + ref.rsplit(".", 1)[-1] if self.cbor else "string"
                raise self._type_error(value, path, struct, go)
            return _canonical_time(value, ref == MICRO_TIME)
        if ref:
            if target.get("type") == "object" or "properties" in target:
                if not isinstance(value, dict):
                    return self._mismatch(
                        self._type_error(value, path, struct, self.go_type(node), kind="struct")
                    )
                return self._object(value, target, path, _struct(ref))
            return self._value(value, target, path, struct)
        return self._plain(value, node, path, struct)

    def _plain(self, value: Any, node: Node, path: str, struct: str) -> Any:
        kind = node.get("type")
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            return self._object(value, node, path, struct)
        if kind == "array":
            if not isinstance(value, list):
                return self._mismatch(
                    self._type_error(value, path, struct, self.go_type(node), kind="slice")
                )
            items = node.get("items", {})
            return [self._item(item, items, f"{path}[{i}]", struct) for i, item in enumerate(value)]
        if kind == "string":
            if node.get("format") == "byte":
                return self._bytes(value, path, struct)
            if not isinstance(value, str):
                return self._mismatch(
                    self._type_error(value, path, struct, "string", kind="string")
                )
            return value
        if kind == "integer":
            int_kind = node.get("format", "int")
            low, high = _INT32 if node.get("format") == "int32" else _INT64
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                return self._mismatch(
                    self._type_error(value, path, struct, int_kind, True, int_kind)
                )
            return value
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return self._mismatch(
                    self._type_error(value, path, struct, "float64", kind="float64")
                )
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                return self._mismatch(self._type_error(value, path, struct, "bool", kind="bool"))
            return value
        return value  # untyped: any JSON value (RawExtension-style)

    def _bytes(self, value: Any, path: str, struct: str) -> str | None:
        """Go's ``[]byte``: base64 text, or, being a slice, an array of numbers 0-255."""
        if isinstance(value, str):
            _check_base64(value)
            return value
        if not isinstance(value, list):
            return self._mismatch(self._type_error(value, path, struct, "[]uint8", kind="slice"))
        value = [0 if item is None else item for item in value]  # null: the zero byte
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= 255:
                return self._mismatch(self._type_error(item, path, struct, "uint8", True, "uint8"))
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
                self._type_error(value, where, struct, self.go_type(node), kind=kind)
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
            elif isinstance(extra, dict):
                entry = f"{path}[{key}]"
                out[key] = self._item(item, extra, entry, struct)
                if resource_list and isinstance(out[key], str):
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


def _check_base64(text: str) -> None:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        position = _first_bad_base64(text)
        raise DecodeError(f"illegal base64 data at input byte {position}") from e


def _first_bad_base64(text: str) -> int:
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(text):
        if ch not in alphabet and ch != "=":
            return i
    return len(text) - len(text) % 4
