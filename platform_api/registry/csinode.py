"""CSINode (storage.platform.io): kube's strategy, ValidateCSINode and ValidateCSINodeUpdate.

A node's CSI drivers, as its kubelet registers them: each driver once, with a node ID
and topology keys; a registered driver may change only its allocatable count
(MutableCSINodeAllocatableCount, on in v1.36).  Lists come back ``null`` when empty, as
kube's Protobuf storage returns them.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import (
    is_qualified_name,
    validate_driver_name,
)

GROUP = "storage.platform.io"
NODE_ID_MAX_LENGTH = 256


@defaults(GROUP, "CSINode")
def _csinode(obj: Obj) -> None:
    spec = obj.get("spec")
    spec = obj["spec"] = spec if isinstance(spec, dict) else {}
    drivers = spec.get("drivers")
    spec["drivers"] = drivers or None
    for driver in drivers or []:
        if isinstance(driver, dict):
            driver["topologyKeys"] = driver.get("topologyKeys") or None


def _driver_errors(driver: Obj, path: str, seen: set[str]) -> list[FieldError]:
    name, node_id = driver.get("name", ""), driver.get("nodeID", "")
    errs = validate_driver_name(name, f"{path}.name")
    if not node_id:
        errs.append(field.required(f"{path}.nodeID"))
    if len(node_id) > NODE_ID_MAX_LENGTH:
        detail = f"must be {NODE_ID_MAX_LENGTH} characters or less"
        errs.append(field.invalid(f"{path}.nodeID", node_id, detail))
    count = (driver.get("allocatable") or {}).get("count")
    errs += field.nonnegative(f"{path}.allocatable.count", count)
    if name in seen:
        errs.append(field.duplicate(f"{path}.name", name))
    seen.add(name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or []:
        if not key:
            errs.append(field.required(path, key))
        if key in keys:
            errs.append(field.duplicate(path, key))
        keys.add(key)
        errs += [field.invalid(path, key, m) for m in is_qualified_name(key)]
    return errs


def validate_csinode_spec(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, driver in enumerate(spec.get("drivers") or []):
        errs += _driver_errors(driver, f"spec.drivers[{i}]", seen)
    return errs


def _go_driver(driver: Obj) -> GoText:
    """The driver as kube's message shows it: its internal Go type, allocatable cleared."""
    shown: dict[str, Any] = {
        "Name": driver.get("name", ""),
        "NodeID": driver.get("nodeID", ""),
        "TopologyKeys": driver.get("topologyKeys") or None,
        "Allocatable": None,
    }
    return GoText(orjson.dumps(shown).decode())


def _without_count(driver: Obj) -> Obj:
    return {k: v for k, v in driver.items() if k != "allocatable"}


@register(GROUP, "CSINode")
class CSINodeStrategy(GenericStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces
    returns_deleted_object = True  # as kube's store for the kind answers a delete

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_csinode_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate(new)  # kube's update checks the metadata as a create's only
        new_drivers = (new.get("spec") or {}).get("drivers") or []
        for before in (old.get("spec") or {}).get("drivers") or []:
            for after in new_drivers:
                same = after.get("name") == before.get("name")
                if same and _without_count(after) != _without_count(before):
                    errs.append(
                        field.invalid("spec.drivers", _go_driver(after), "field is immutable")
                    )
        return errs
