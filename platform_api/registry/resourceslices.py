"""ResourceSlices (resource.platform.io): kube's strategy and ``ValidateResourceSlice``
with its update rules.

A slice publishes one driver's devices (or shared counter sets) of one pool, for one
node, a node selector, all nodes, or per device; its driver, pool name and node name
never change.  ``metadata.generation`` counts spec changes, as kube compares specs
(quantities by value).  New taints get the time they were added.
"""

from __future__ import annotations

import time

from platform_api.registry.defaults import defaults
from platform_api.registry.dradevices import counter_set, validate_device
from platform_api.registry.dranames import (
    GROUP,
    IMMUTABLE,
    Obj,
    driver_name,
    integer,
    items,
    node_name,
    node_selector,
    obj,
    pool_name,
    text,
    validate_set,
)
from platform_api.registry.gateddrops import LIST_VALUES
from platform_api.registry.gointernal import go_text, same
from platform_api.registry.strategy import GenericStrategy, register
from platform_api.timestamps import format_timestamp
from platform_api.validation import field
from platform_api.validation.field import FieldError

MAX_DEVICES = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
MAX_COUNTER_SETS = 8
NODE_CHOICE = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)


@defaults(GROUP, "ResourceSlice")
def _slice_defaults(slice_: Obj) -> None:
    """SetDefaults_DeviceTaint (the time, to the second) and SetDefaults_Device."""
    for device in items(obj(slice_.get("spec")).get("devices")):
        if not isinstance(device, dict):
            continue
        for taint in items(device.get("taints")):
            if isinstance(taint, dict) and not taint.get("timeAdded"):
                taint["timeAdded"] = format_timestamp(time.time())
        for mapping in obj(device.get("nodeAllocatableResourceMappings")).values():
            if isinstance(mapping, dict) and mapping.get("allocationMultiplier") is None:
                mapping["allocationMultiplier"] = "1"


def _advanced(devices: list[object]) -> bool:
    """Taints, counter consumption or list attributes lower the device limit."""
    for device in (obj(d) for d in devices):
        if items(device.get("taints")) or items(device.get("consumesCounters")):
            return True
        attributes = obj(device.get("attributes")).values()
        if any(obj(a).get(key) is not None for a in attributes for key in LIST_VALUES):
            return True
    return False


def _old_device(old: Obj | None, name: str) -> Obj | None:
    """``lookupDevice``: the stored device of that name."""
    for device in items((old or {}).get("devices")):
        if text(obj(device).get("name")) == name:
            return obj(device)
    return None


def validate_slice_spec(spec: Obj, old: Obj | None) -> list[FieldError]:
    """``validateResourceSliceSpec``; ``old``: the stored spec on update."""
    errs = driver_name(text(spec.get("driver")), "spec.driver")
    errs += _pool(obj(spec.get("pool")))
    if old is not None:
        errs += _immutable(spec, old)
    errs += _node_choice(spec)
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        detail = "only one of `sharedCounters` or `devices` is allowed"
        errs.append(field.invalid("spec", "", detail))
    devices = items(spec.get("devices"))
    limit = MAX_DEVICES_WITH_ADVANCED_FEATURES if _advanced(devices) else MAX_DEVICES
    per_device = spec.get("perDeviceNodeSelection")
    errs += validate_set(
        devices,
        limit,
        lambda device, at: validate_device(
            obj(device), _old_device(old, text(obj(device).get("name"))), at, per_device is True
        ),
        lambda device: text(obj(device).get("name")),
        "spec.devices",
    )
    return errs + validate_set(
        spec.get("sharedCounters"),
        MAX_COUNTER_SETS,
        counter_set,
        lambda c: text(obj(c).get("name")),
        "spec.sharedCounters",
    )


def _pool(pool: Obj) -> list[FieldError]:
    errs = pool_name(text(pool.get("name")), "spec.pool.name")
    count = integer(pool.get("resourceSliceCount"))
    if count <= 0:
        errs.append(
            field.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")
        )
    generation = integer(pool.get("generation"))
    if generation < 0:
        detail = "must be greater than or equal to zero"
        errs.append(field.invalid("spec.pool.generation", generation, detail))
    return errs


def _immutable(spec: Obj, old: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    name, old_name = text(obj(spec.get("pool")).get("name")), text(obj(old.get("pool")).get("name"))
    if name != old_name:
        errs.append(field.invalid("spec.pool.name", name, IMMUTABLE))
    if text(spec.get("driver")) != text(old.get("driver")):
        errs.append(field.invalid("spec.driver", text(spec.get("driver")), IMMUTABLE))
    node, old_node = spec.get("nodeName"), old.get("nodeName")
    if (node is None) != (old_node is None) or text(node) != text(old_node):
        errs.append(field.invalid("spec.nodeName", None if node is None else text(node), IMMUTABLE))
    return errs


def _node_choice(spec: Obj) -> list[FieldError]:
    """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection."""
    errs: list[FieldError] = []
    chosen: list[str] = []
    name = spec.get("nodeName")
    if name is not None:
        if text(name):
            chosen.append("`nodeName`")
            errs += node_name(text(name), "spec.nodeName")
        else:
            detail = "must be either unset or set to a non-empty string"
            errs.append(field.invalid("spec.nodeName", "", detail))
    selector = spec.get("nodeSelector")
    if selector is not None:
        chosen.append("`nodeSelector`")
        errs += node_selector(obj(selector), "spec.nodeSelector")
        terms = obj(selector).get("nodeSelectorTerms")
        if len(items(terms)) != 1:
            at = "spec.nodeSelector.nodeSelectorTerms"
            shown = go_text("[]core.NodeSelectorTerm", terms)
            errs.append(field.invalid(at, shown, "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(key)
        if value is True:
            chosen.append(f"`{key}`")
        elif value is not None:
            errs.append(field.invalid(f"spec.{key}", False, "must be either unset or set to true"))
    if not chosen:
        errs.append(field.required("spec", NODE_CHOICE))
    elif len(chosen) > 1:
        detail = f"{NODE_CHOICE}, but multiple fields are set"
        errs.append(field.invalid("spec", "{" + ", ".join(chosen) + "}", detail))
    return errs


def _driver_warnings(slice_: Obj) -> list[str]:
    driver = text(obj(slice_.get("spec")).get("driver"))
    if driver != driver.lower():
        return [
            f"spec.driver: driver names should be lowercase; {field.go_quote(driver)} "
            "contains uppercase characters"
        ]
    return []


@register(GROUP, "ResourceSlice")
class ResourceSliceStrategy(GenericStrategy):
    returns_deleted_object = True  # as each of kube's DRA stores

    def prepare_for_create(self, slice_: Obj) -> None:
        super().prepare_for_create(slice_)
        slice_["metadata"]["generation"] = 1

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """kube counts spec changes (compared as Go values) before dropping fields."""
        if not same("dra.ResourceSliceSpec", new.get("spec"), old.get("spec")):
            new["metadata"]["generation"] = (old["metadata"].get("generation") or 0) + 1
        super().prepare_for_update(new, old)

    def validate(self, slice_: Obj) -> list[FieldError]:
        return super().validate(slice_) + validate_slice_spec(obj(slice_.get("spec")), None)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec, before = obj(new.get("spec")), obj(old.get("spec"))
        return super().validate_update(new, old) + validate_slice_spec(spec, before)

    def warnings(self, slice_: Obj, old: Obj | None) -> list[str]:
        return _driver_warnings(slice_)
