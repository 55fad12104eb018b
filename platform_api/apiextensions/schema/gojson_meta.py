"""Decoding ``metadata`` into Go's ObjectMeta, as ``json.Unmarshal`` would.

kube turns a custom resource's (or an embedded resource's) ``metadata`` into a typed
``metav1.ObjectMeta`` and back: wrong types fail with Go's decoder messages (``json: cannot
unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string``),
unknown fields are dropped (and reported under strict field validation), and what is kept is
rewritten in ObjectMeta's canonical form (empty fields omitted, times in UTC seconds).
``decode`` returns that canonical dict.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from platform_api import gotime
from platform_api.apiextensions.schema.gotext import INT64_MAX, INT64_MIN, go_json
from platform_api.gotext import json_kind
from platform_api.timestamps import format_time

STRING, UID, INT64, BOOL, TIME, RAW = "string", "types.UID", "int64", "bool", "v1.Time", "raw"
MAP = "map[string]string"
# How ObjectMeta's JSON form omits a field: "empty" (omitempty on a value), "nil" (a pointer:
# only when unset), "never"
OWNER_REFERENCE = (
    ("apiVersion", STRING, "never"),
    ("kind", STRING, "never"),
    ("name", STRING, "never"),
    ("uid", UID, "never"),
    ("controller", BOOL, "nil"),
    ("blockOwnerDeletion", BOOL, "nil"),
)
MANAGED_FIELDS_ENTRY = (
    ("manager", STRING, "empty"),
    ("operation", "v1.ManagedFieldsOperationType", "empty"),
    ("apiVersion", STRING, "empty"),
    ("time", TIME, "nil"),
    ("fieldsType", STRING, "empty"),
    ("fieldsV1", RAW, "nil"),
    ("subresource", STRING, "empty"),
)
# (JSON name, Go type, omission); lists of structs carry their struct's fields
OBJECT_META: tuple[tuple[str, Any, str], ...] = (
    ("name", STRING, "empty"),
    ("generateName", STRING, "empty"),
    ("namespace", STRING, "empty"),
    ("selfLink", STRING, "empty"),
    ("uid", UID, "empty"),
    ("resourceVersion", STRING, "empty"),
    ("generation", INT64, "empty"),
    ("creationTimestamp", TIME, "empty"),
    ("deletionTimestamp", TIME, "nil"),
    ("deletionGracePeriodSeconds", INT64, "nil"),
    ("labels", MAP, "empty"),
    ("annotations", MAP, "empty"),
    ("ownerReferences", ("v1.OwnerReference", OWNER_REFERENCE), "empty"),
    ("finalizers", "[]string", "empty"),
    ("managedFields", ("v1.ManagedFieldsEntry", MANAGED_FIELDS_ENTRY), "empty"),
)
_SCALARS = {STRING: str, UID: str, "v1.ManagedFieldsOperationType": str, BOOL: bool}


class DecodeError(ValueError):
    pass


class _State:
    """One decode: the first type error wins, as Go's ``saveError`` keeps it."""

    def __init__(self, strict_prefix: str | None) -> None:
        self.error: str | None = None
        self.unknown: list[str] | None = [] if strict_prefix is not None else None
        self.prefix = strict_prefix or ""

    def type_error(self, json_kind: str, go_type: str, struct: str, stack: list[str]) -> None:
        if self.error is None:
            where = f"Go struct field {struct}.{'.'.join(stack)}" if stack else "Go value"
            self.error = f"json: cannot unmarshal {json_kind} into {where} of type {go_type}"


def decode(meta: Any, strict_prefix: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """ObjectMeta's canonical form of ``meta`` and the unknown field paths (strict mode).

    Raises ``DecodeError`` with Go's message when a field has the wrong type.
    """
    state = _State(strict_prefix)
    if not isinstance(meta, dict):
        if meta is None:
            return {}, []
        raise DecodeError(
            f"json: cannot unmarshal {json_kind(meta)} into Go value of type v1.ObjectMeta"
        )
    out = _struct(meta, OBJECT_META, "ObjectMeta", [], state, "")
    if state.error is not None:
        raise DecodeError(state.error)
    return out, state.unknown or []


def _struct(
    obj: dict[str, Any],
    fields: tuple[tuple[str, Any, str], ...],
    struct: str,
    stack: list[str],
    state: _State,
    strict_path: str,
) -> dict[str, Any]:
    known = _KNOWN.get(id(fields))
    if known is None:
        known = _KNOWN[id(fields)] = {name: kind for name, kind, _ in fields}
    values: dict[str, Any] = {}
    for key in sorted(obj):
        kind = known.get(key)
        if kind is None:
            if state.unknown is not None:
                sub = f"{strict_path}.{key}" if strict_path else key
                state.unknown.append(f"{state.prefix}.{sub}")
            continue
        value = obj[key]
        if kind is STRING and type(value) is str:
            values[key] = value
            continue
        sub = f"{strict_path}.{key}" if strict_path else key
        value = _field(value, kind, struct, [*stack, key], state, sub)
        if value is not _SKIP:
            values[key] = value
    out: dict[str, Any] = {}
    for name, kind, omit in fields:
        value = values.get(name)
        if omit == "never":
            out[name] = "" if value is None else value
        elif omit == "nil":
            if value is not None:
                out[name] = value
        elif value not in (None, "", {}, []) and not (kind == INT64 and value == 0):
            out[name] = value
    return out


_SKIP: Any = object()
_KNOWN: dict[int, dict[str, Any]] = {}


def _field(value: Any, kind: Any, struct: str, stack: list[str], state: _State, path: str) -> Any:
    if value is None:
        return None
    if kind == TIME:
        return _time(value, struct, stack)
    if kind == RAW:
        return value
    if kind == INT64:
        if isinstance(value, bool) or not isinstance(value, int | float):
            state.type_error(json_kind(value), "int64", struct, stack)
            return _SKIP
        text = go_json(value)
        if not re.fullmatch(r"-?[0-9]+", text) or not INT64_MIN <= int(text) <= INT64_MAX:
            state.type_error(f"number {text}", "int64", struct, stack)
            return _SKIP
        return int(text)
    if kind == MAP:
        if not isinstance(value, dict):
            state.type_error(json_kind(value), MAP, struct, stack)
            return _SKIP
        out = {}
        for k in sorted(value):
            v = value[k]
            if v is not None and not isinstance(v, str):
                state.type_error(json_kind(v), "string", struct, stack)
                continue
            out[k] = v or ""
        return out
    if kind == "[]string":
        return _list(
            value,
            "[]string",
            struct,
            stack,
            state,
            lambda v, i: _scalar(v, STRING, struct, stack, state),
        )
    if isinstance(kind, tuple):
        name, fields = kind
        if not isinstance(value, list):
            state.type_error(json_kind(value), f"[]{name}", struct, stack)
            return _SKIP
        inner = name.split(".")[-1]
        out_list = []
        for i, item in enumerate(value):
            if item is not None and not isinstance(item, dict):
                state.type_error(json_kind(item), name, struct, stack)
                continue
            out_list.append(_struct(item or {}, fields, inner, stack, state, f"{path}[{i}]"))
        return out_list
    return _scalar(value, kind, struct, stack, state)


def _scalar(value: Any, kind: str, struct: str, stack: list[str], state: _State) -> Any:
    if value is None:
        return None
    expected = _SCALARS[kind]
    if type(value) is not expected:
        state.type_error(json_kind(value), kind, struct, stack)
        return _SKIP
    return value


def _list(value: Any, go_type: str, struct: str, stack: list[str], state: _State, item: Any) -> Any:
    if not isinstance(value, list):
        state.type_error(json_kind(value), go_type, struct, stack)
        return _SKIP
    out = []
    for i, v in enumerate(value):
        decoded = item(v, i)
        out.append("" if decoded is None or decoded is _SKIP else decoded)
    return out


# -- metav1.Time ---------------------------------------------------------------------------


class TimeError(DecodeError):
    pass


def _time(value: Any, struct: str, stack: list[str]) -> Any:
    """``metav1.Time.UnmarshalJSON``: its errors end the decode at once."""
    if not isinstance(value, str):
        where = f"Go struct field {struct}.{'.'.join(stack)}"
        raise DecodeError(f"json: cannot unmarshal {json_kind(value)} into {where} of type string")
    return format_time(parse_rfc3339(value))


def parse_rfc3339(text: str) -> datetime:
    """``time.Parse(time.RFC3339, s)`` with Go's error messages."""
    try:
        return gotime.parse(text)
    except gotime.TimeParseError as e:
        raise TimeError(str(e)) from None
