"""How objects are written into etcd (``--storage-media-type``) and read back.

kube-apiserver stores Protobuf by default, and JSON for kinds with no Protobuf message
(custom resources).  A value is read back by its first bytes, whatever it was written
in, as kube's recognizing decoder does: the Protobuf prefix ``k8s\\0``, JSON's ``{``,
else YAML; so changing the flag needs no migration.  LMDB always holds JSON.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.codec import BodyError, gobase64, parse_yaml, protobuf
from platform_api.codec.goshape import type_claim_templates
from platform_api.codec.goyaml import yaml_dumps
from platform_api.gotext import object_json, typemeta_problem
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.schemas import load_schemas

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = protobuf.BRANDED_MEDIA_TYPE
ALLOWED = (JSON, PROTOBUF, YAML)  # sorted, as kube's flag error lists them
_ALIASES = {protobuf.MEDIA_TYPE: PROTOBUF}  # kube's own name for the same encoding


def canonical(media_type: str) -> str | None:
    """The media type a ``--storage-media-type`` value names, or None if unsupported."""
    media_type = _ALIASES.get(media_type, media_type)
    return media_type if media_type in ALLOWED else None


def encode(obj: dict[str, Any], media_type: str) -> bytes:
    """``obj`` in ``media_type``; JSON for a kind Protobuf has no message for."""
    if media_type == PROTOBUF and protobuf.supports(obj.get("apiVersion", ""), obj.get("kind", "")):
        return protobuf.encode(obj)
    if media_type == YAML:
        return yaml_dumps(obj)
    return object_json(obj) + b"\n"


def decode(
    data: bytes, *, builtin: bool = True, typed: tuple[str, str] | None = None
) -> dict[str, Any]:
    """A stored object, in whichever media type it was written; ValueError, in kube's
    words, if the value is none (``etcdctl put`` writes whatever it is given).  ``typed``
    is the (apiVersion, kind) of the built-in resource it is stored under: a text value
    that lacks them is read as kube reads it into that Go type (``_typed_as``).  kube's
    storage decoders for built-in kinds end with a base64-wrapped one (for values etcd2
    held as text): a value that is neither Protobuf nor a JSON object and that YAML does
    not read as one is tried as base64 last, and that try's failure is what kube reports
    (``illegal base64 data at input byte 4`` for ``just words``)."""
    try:
        return _decoded(data, builtin, typed)
    except _Unread:
        if not builtin or data.startswith(protobuf.PREFIX) or _json_buffer(data):
            raise
    try:
        unwrapped = gobase64.decode(data)
    except gobase64.CorruptInput as e:
        raise ValueError(str(e)) from None
    return _decoded(unwrapped, builtin, typed)


class _Unread(ValueError):
    """What kube's recognizing decoder fails with too (so a later decoder may be tried)."""


def _json_buffer(data: bytes) -> bool:
    """kube's ``IsJSONBuffer``: a JSON object, by its first byte past white space."""
    return data.lstrip()[:1] == b"{"


def _decoded(data: bytes, builtin: bool, typed: tuple[str, str] | None) -> dict[str, Any]:
    if data.startswith(protobuf.PREFIX):  # recognized: its failure is the one reported
        obj = protobuf.decode(data)
        if (obj["apiVersion"], obj["kind"]) == ("apps/v1", "StatefulSet"):
            type_claim_templates(obj)  # TypeMeta kube's conversion adds, not in the message
        return obj
    try:
        if data.lstrip()[:1] in (b"{", b"["):
            value = orjson.loads(data)
        else:
            value, _ = parse_yaml(data)
    except (BodyError, ValueError) as e:
        raise _Unread(str(e)) from None
    if value is None and typed is None:
        raise ValueError("Object 'Kind' is missing in 'null'")
    if value is None:
        value = {}  # Go decodes null into the zero value of the type
    if not isinstance(value, dict):
        if builtin:
            raise _Unread(typemeta_problem(value))
        raise _Unread(
            f"json: cannot unmarshal {_go_kind(value)} into Go value of type map[string]interface {{}}"
        )
    meta = value.get("metadata")
    if meta is None and "metadata" in value:
        value["metadata"] = {}  # Go decodes null into the zero ObjectMeta
    elif meta is not None and not isinstance(meta, dict):
        kind = value.get("kind") if isinstance(value.get("kind"), str) else ""
        raise _Unread(
            f"json: cannot unmarshal {_go_kind(meta)} into Go struct field "
            f"{kind}.metadata of type v1.ObjectMeta"
        )
    if typed is not None:
        value = _typed_as(value, *typed)
    try:
        return _typed(value)
    except ValueError as e:
        raise _Unread(str(e)) from None


def _typed_as(value: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A built-in resource's text value that names no type, as kube's storage decodes it
    into the resource's Go type (checked on kube-apiserver v1.36): a missing kind is the
    type's, fields kept; with no apiVersion the value is decoded into kube's internal
    version, whose fields have no JSON names, so nothing is kept (``null``, ``{}`` and
    ``{"kind": ...}`` alike read as an empty object)."""
    if not value.get("apiVersion"):
        return {"kind": kind, "apiVersion": api_version, "metadata": {}}
    if not value.get("kind"):
        value = {"kind": kind, **value}  # first, as Go writes TypeMeta
    value.setdefault("metadata", {})
    return value


def _typed(value: dict[str, Any]) -> dict[str, Any]:
    """A built-in kind's text value as kube's storage decodes it into its Go type: a field
    of the wrong type is Go's error (DecodeError, a ValueError), unknown fields and nulls
    are dropped.  Only text values need it (this server writes Protobuf, which cannot
    hold a wrong type) and only built-in kinds have a type (a custom resource is a map)."""
    api_version, kind = value.get("apiVersion"), value.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return value
    group, _, version = api_version.rpartition("/")
    schemas = load_schemas()
    try:
        definition = schemas.for_kind(group, version, kind)
    except KeyError:
        return value
    return Decoder(schemas).decode(value, definition).obj


def _go_kind(value: Any) -> str:
    """What Go's encoding/json calls a JSON value in its errors."""
    kinds = {list: "array", str: "string", bool: "bool"}
    return kinds.get(type(value), "number")
