"""Table columns of custom resources: ``additionalPrinterColumns`` (default ``Age``).

kube's CRD table convertor: ``Name`` first, then each column's JSONPath evaluated
on the object; ``date`` cells become human-readable ages, other types keep their
JSON value when it has the column's type and are empty otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api import gotime
from platform_api.apiextensions import crd as crds
from platform_api.endpoints import printers as core
from platform_api.endpoints.tables import Column, Printer
from platform_api.jsonpath import JSONPathError, parse

Obj = dict[str, Any]
_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, "
    "although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and "
    "is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata"
)
DEFAULT_COLUMNS = [
    {
        "name": "Age",
        "type": "date",
        "description": _CREATED_DESCRIPTION,
        "jsonPath": ".metadata.creationTimestamp",
    }
]


def _column(kind: str, json_path: str) -> Callable[[Obj], Any]:
    """A column's cell: the first JSONPath result in the column's type, else None."""
    try:
        path = parse("{" + json_path + "}", allow_missing_keys=True)
    except JSONPathError:
        return lambda obj: None  # kube refuses to serve such a column at all

    def get(obj: Obj) -> Any:
        try:
            results = path.find_results(obj)
        except JSONPathError:
            return None
        if not results or not results[0]:
            return None
        value = results[0][0]
        if kind == "string":  # printed as kubectl's jsonpath prints it
            if value is None:  # kube prints reflect.ValueOf(nil): text/template's words
                return "<no value>"
            return value if isinstance(value, str) else path.print_results([value])
        return cell(kind, value)

    return get


def cell(kind: str, value: Any) -> Any:
    """kube's ``cellForJSONValue``: the value when it has the column's type."""
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        # Go's int64(float64): truncated; past int64's range amd64 gives its minimum
        return int(value) if -(2**63) <= value < 2**63 else -(2**63)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return _date(value)
    return None


def _date(text: str) -> str:
    """kube reads a date cell as a query parameter (RFC 3339, Go's parser; empty or
    ``null`` is the zero time, ``<unknown>``) and shows one that does not parse as
    ``<invalid>``."""
    if text in ("", "null"):
        return "<unknown>"
    try:
        moment = gotime.parse(text)
    except ValueError:
        return "<invalid>"
    return core.human_duration(core.clock() - moment.timestamp())


def printer_for(crd: Obj, version: str) -> Printer:
    columns = crds.version_of(crd, version).get("additionalPrinterColumns") or DEFAULT_COLUMNS
    definitions = [Column("Name", "string", "name", _NAME_DESCRIPTION)]
    for col in columns:
        description = col.get("description") or (
            f"Custom resource definition column (in JSONPath format): {col['jsonPath']}"
        )
        definitions.append(
            Column(
                col["name"],
                col["type"],
                col.get("format", ""),
                description,
                int(col.get("priority", 0)),
            )
        )
    getters = [_column(col["type"], col["jsonPath"]) for col in columns]

    def cells(obj: Obj) -> list[Any]:
        row: list[Any] = [obj.get("metadata", {}).get("name", "")]
        row += [get(obj) for get in getters]
        return row

    return Printer(tuple(definitions), cells)
