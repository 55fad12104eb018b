"""Custom-resource values as CEL evaluates them, converted only where the schema asks for it.

Objects stay the dicts they are (property names are mapped to escaped CEL names in the checked
AST instead, see ``celfields``); ``number`` values become floats, and strings of format ``byte``,
``duration``, ``date`` and ``date-time`` become bytes, durations and timestamps, as kube's
``UnstructuredToVal`` does.  A schema without such nodes converts nothing (no copy at all).
A value that does not parse is left as it is (kube reports the error when it is accessed;
schema validation has rejected such values before rules run).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from collections.abc import Callable
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2

from platform_api.cel.schematypes import DeclType
from platform_api.goduration import parse_openapi_duration

Convert = Callable[[Any], Any]


def _duration(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    nanos = parse_openapi_duration(value)
    if nanos is None:
        return value
    out = duration_pb2.Duration()
    out.FromNanoseconds(nanos)
    return out


def _timestamp_of(moment: datetime.datetime) -> Any:
    out = timestamp_pb2.Timestamp()
    out.FromDatetime(moment.astimezone(datetime.UTC).replace(tzinfo=None))
    return out


def _date(value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            day = datetime.date.fromisoformat(value)
        except ValueError:
            return value
        return _timestamp_of(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC))
    return value


_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?\Z")


def _date_time(value: Any) -> Any:
    match = _DATETIME.match(value) if isinstance(value, str) else None
    if match is None:
        return value
    day, clock, frac, zone = match.groups()
    micros = (frac[1:] + "000000")[:6] if frac else "000000"
    offset = "+00:00" if zone in (None, "Z") else zone
    try:
        moment = datetime.datetime.fromisoformat(f"{day}T{clock}.{micros}{offset}")
    except ValueError:
        return value
    return _timestamp_of(moment)


def _bytes(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value


def _double(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


_SCALARS: dict[str, Convert] = {
    "double": _double,
    "bytes": _bytes,
    "duration": _duration,
    "timestamp": _date_time,
}


def converter(t: DeclType | None, schema: dict[str, Any] | None = None) -> Convert | None:
    """A function converting JSON values of type ``t``, or None when they need no conversion."""
    if t is None:
        return None
    if t.kind == "timestamp" and schema is not None and schema.get("format") == "date":
        return _date
    if t.kind in _SCALARS:
        return _SCALARS[t.kind]
    if t.kind in ("list", "map"):
        inner = converter(
            t.elem, _child(schema, "items" if t.kind == "list" else "additionalProperties")
        )
        if inner is None:
            return None
        if t.kind == "list":
            return lambda v: [inner(x) for x in v] if isinstance(v, list) else v
        return lambda v: {k: inner(x) for k, x in v.items()} if isinstance(v, dict) else v
    if t.kind == "object":
        props = (schema or {}).get("properties") or {}
        fields = {}
        for name, ftype in t.fields.values():
            conv = converter(ftype, props.get(name))
            if conv is not None:
                fields[name] = conv
        if not fields:
            return None
        return lambda v: _convert_object(v, fields)
    return None


def _child(schema: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    child = (schema or {}).get(key)
    return child if isinstance(child, dict) else None


def _convert_object(value: Any, fields: dict[str, Convert]) -> Any:
    if not isinstance(value, dict):
        return value
    out = dict(value)
    for name, conv in fields.items():
        if name in out and out[name] is not None:
            out[name] = conv(out[name])
    return out
