"""managedFields entries: their keys, FieldsV1 decoding and encoding in kube's order,
the cap on Update entries, and the conflict error that names them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api import errors
from platform_api.fieldmanager.fieldpath import (
    FieldSet,
    from_fields_v1,
    iteration_order,
    path_string,
    to_fields_v1,
)
from platform_api.gotext import json_string

Obj = dict[str, Any]
APPLY, UPDATE = "Apply", "Update"
MAX_UPDATE_ENTRIES = 10
ANCIENT = "ancient-changes"


@dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: FieldSet = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str, str, str]:
        version = self.api_version if self.operation == UPDATE else ""
        return (self.manager, self.operation, version, self.subresource)

    def identifier(self) -> str:
        """kube's manager identifier (``BuildManagerIdentifier``): the entry's JSON without
        its fields and time, and without the version of an Apply."""
        text = f'{{"manager":{json_string(self.manager)},"operation":{json_string(self.operation)}'
        if self.operation == UPDATE and self.api_version:
            text += f',"apiVersion":{json_string(self.api_version)}'
        if self.subresource:
            text += f',"subresource":{json_string(self.subresource)}'
        return text + "}"

    def printed(self) -> str:
        """The manager as conflict messages name it (kube's printManager)."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def encode(self) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation}
        out["apiVersion"] = self.api_version
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


Managers = dict[tuple[str, str, str, str], Entry]


def decode(entries: Any) -> Managers:
    """The managers of stored ``managedFields``; ValueError when they do not decode."""
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    managers: Managers = {}
    for raw in entries:  # kube's DecodeManagedFields: any bad entry fails them all
        if not isinstance(raw, dict) or raw.get("fieldsType") != "FieldsV1":
            raise ValueError("unsupported managedFields entry")
        if raw.get("operation") not in (APPLY, UPDATE) or not raw.get("apiVersion"):
            raise ValueError("operation must be Apply or Update, apiVersion not empty")
        entry = Entry(
            manager=str(raw.get("manager", "")),
            operation=str(raw.get("operation", "")),
            api_version=str(raw.get("apiVersion", "")),
            subresource=str(raw.get("subresource", "")),
            time=raw.get("time"),
            fields=from_fields_v1(raw.get("fieldsV1") or {}),
        )
        managers[entry.key] = entry
    return managers


def encode(managers: Managers) -> list[Obj]:
    """Entries in kube's order: Apply before Update, then by time, manager, version."""
    ordered = sorted(
        managers.values(),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    return [entry.encode() for entry in ordered]


def cap_updates(managers: Managers) -> None:
    """Keep at most ten Update entries: the oldest merge into ``ancient-changes``."""
    updaters = sorted(
        (e for e in managers.values() if e.operation == UPDATE),
        key=lambda e: (e.time or "", e.manager),
    )
    count = len(updaters)
    buckets: dict[str, Entry] = {}
    for entry in updaters:
        if count <= MAX_UPDATE_ENTRIES:
            break
        bucket = buckets.get(entry.api_version)
        del managers[entry.key]
        if bucket is None:
            bucket = Entry(ANCIENT, UPDATE, entry.api_version, time=entry.time)
            bucket.fields = set(entry.fields)
            existing = managers.pop(bucket.key, None)
            if existing is not None:
                bucket.fields |= existing.fields
                count -= 1
            buckets[entry.api_version] = bucket
        else:
            bucket.fields |= entry.fields
            bucket.time = entry.time
            count -= 1
        managers[bucket.key] = bucket


def store(meta: Obj, managers: Managers, cap: bool = True) -> None:
    """``meta``'s managedFields from ``managers``, those owning nothing dropped; ``cap``:
    at most ten Update entries (not for a Scale's owners folded back, as kube's)."""
    for key in [k for k, e in managers.items() if not e.fields]:
        del managers[key]
    if cap:
        cap_updates(managers)
    if managers:
        meta["managedFields"] = encode(managers)
    else:
        meta.pop("managedFields", None)


def conflict_error(conflicts: list[tuple[Entry, tuple[str, ...]]]) -> errors.StatusError:
    """409 with one ``FieldManagerConflict`` cause per field, in kube's wording: the
    managers in the order of their identifiers (kube's message sorts them so), each one's
    fields as structured-merge-diff iterates them."""
    conflicts.sort(key=lambda c: (c[0].identifier(), iteration_order(c[1])))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.printed()}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        detail = f"conflict with {entry.printed()}: {path_string(path)}"
        return errors.apply_conflict(causes, f"Apply failed with 1 conflict: {detail}")
    lines: list[str] = []
    for entry, path in conflicts:
        header = f"conflicts with {entry.printed()}:"
        if header not in lines:
            lines.append(header)
        lines.append(f"- {path_string(path)}")
    message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.apply_conflict(causes, message)
