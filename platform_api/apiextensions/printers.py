"""Table columns of custom resources: ``additionalPrinterColumns`` (default ``Age``).

kube's CRD table convertor: ``Name`` first, then each column's JSONPath evaluated
on the object; ``date`` cells become human-readable ages, other types keep their
JSON value when it has the column's type and are empty otherwise.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions import crd as crds
from platform_api.endpoints.printers import age
from platform_api.endpoints.tables import Column, Printer

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


def _lookup(obj: Any, path: str) -> Any:
    value = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def cell(kind: str, value: Any) -> Any:
    """kube's ``cellForJSONValue``: the value when it has the column's type."""
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "string":
        return value if isinstance(value, str) else str(value)
    if kind == "date" and isinstance(value, str):
        return age(value)
    return None


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
    paths = [(col["type"], col["jsonPath"]) for col in columns]

    def cells(obj: Obj) -> list[Any]:
        row: list[Any] = [obj.get("metadata", {}).get("name", "")]
        row += [cell(kind, _lookup(obj, path)) for kind, path in paths]
        return row

    return Printer(tuple(definitions), cells)
