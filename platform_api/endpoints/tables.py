"""Server-side table rendering (``Accept: application/json;as=Table;g=meta...;v=v1``).

kube's default convertor gives every kind ``Name`` and ``Created At``; kinds with
printers of their own register column functions in ``COLUMNS``.  The Table is
answered in the meta group the client asked for, so stock kubectl (which asks for
``meta.k8s.io``) prints server-side columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from platform_api import errors
from platform_api.endpoints.partial import metadata_only
from platform_api.scheme.schemas import OBJECT_META, Schemas
from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]
Cells = Callable[[Obj], list[Any]]
Conditions = Callable[[Obj], list[Obj]]


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    cells: Cells
    # the row's conditions (kube marks a finished pod's row Completed)
    conditions: Conditions | None = None
    # the order kube's list printer gives the rows (flow schemas by precedence)
    sort_key: Callable[[Obj], Any] | None = None


# (group, plural) -> printer; filled by kinds that have kube printers.
COLUMNS: dict[tuple[str, str], Printer] = {}
INCLUDE_OBJECT = ("", "None", "Metadata", "Object")


def check_include(include: str) -> None:
    """kube's TableOptions validation of ``includeObject``, in the words its response
    writer refuses a Table with (for a get, a list and a watch alike)."""
    if include not in INCLUDE_OBJECT:
        raise errors.bad_request(
            "Unable to convert to Table as requested: includeObject: Invalid value: "
            f"\"{include}\": must be 'Metadata', 'Object', 'None', or empty"
        )


class TableConvertor:
    def __init__(self, schemas: Schemas) -> None:
        # Printers of custom resource versions (their additionalPrinterColumns), by
        # (group, version, plural); kept by the CRD installer.
        self.custom: dict[tuple[str, str, str], Printer] = {}
        meta = schemas.get(OBJECT_META)["properties"]
        self._default = Printer(
            (
                Column("Name", "string", "name", meta["name"].get("description", "")),
                Column("Created At", "date", "", meta["creationTimestamp"].get("description", "")),
            ),
            lambda obj: [
                obj.get("metadata", {}).get("name", ""),
                obj.get("metadata", {}).get("creationTimestamp"),
            ],
        )

    def printer(self, rt: ResourceType) -> Printer:
        custom = self.custom.get((rt.group, rt.version, rt.plural))
        if custom is not None:
            return custom
        return COLUMNS.get((rt.group, rt.plural), self._default)

    def table(
        self,
        rt: ResourceType,
        objects: Iterable[Obj],
        group: str,
        version: str,
        include: str,
        list_meta: dict[str, Any],
    ) -> Obj:
        check_include(include)
        printer = self.printer(rt)
        api_version = f"{group}/{version}"
        if printer.sort_key is not None:
            objects = sorted(objects, key=printer.sort_key)
        rows = []
        for obj in objects:
            row: Obj = {"cells": printer.cells(obj)}
            conditions = printer.conditions(obj) if printer.conditions else None
            if conditions:
                row["conditions"] = conditions
            if include == "Object":
                row["object"] = obj
            elif include == "None":  # kube's RawExtension left empty still writes null
                row["object"] = None
            else:
                row["object"] = metadata_only(obj, api_version)
            rows.append(row)
        return {
            "kind": "Table",
            "apiVersion": api_version,
            "metadata": list_meta,
            "columnDefinitions": [c.definition() for c in printer.columns],
            # kube's default convertor leaves an empty list's rows null; printers give []
            "rows": None if not rows and printer is self._default else rows,
        }
