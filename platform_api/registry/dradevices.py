"""One device of a ResourceSlice: kube's ``validateDevice`` with its attributes,
capacities (and their request policies, when the device may be allocated several times),
taints, counter consumption, per-device node selection and node-allocatable mappings;
and the shared counter sets a slice may declare instead of devices.

Quantities compare by value and print canonically (``Quantity.String()``), as kube's
messages show them.
"""

from __future__ import annotations

import itertools
import re
from decimal import Decimal
from typing import Any

from platform_api.quantity import Quantity, QuantityError, format_quantity, parse
from platform_api.registry.dranames import (
    ATTRIBUTE_KEY_MAX_LENGTH,
    Obj,
    binding_parameters,
    device_taint,
    dns_label,
    items,
    no_errors,
    node_name,
    node_selector,
    obj,
    qualified_name,
    size,
    text,
    validate_map,
    validate_set,
    validate_slice,
)
from platform_api.registry.gateddrops import LIST_VALUES
from platform_api.registry.gointernal import go_text, same
from platform_api.registry.quota_validation import is_native
from platform_api.validation import field
from platform_api.validation.field import FieldError

MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
ATTRIBUTE_MAX_VALUE_LENGTH = 64
TAINTS_MAX_LENGTH = 16
MAX_COUNTER_CONSUMPTIONS = 2
MAX_COUNTERS = 32
COUNTER_KEY_LENGTH = 63
DISCRETE_MAX_OPTIONS = 10
_NUMERIC = r"(0|[1-9][0-9]*)"
_PRERELEASE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(
    f"^{_NUMERIC}\\.{_NUMERIC}\\.{_NUMERIC}(-{_PRERELEASE}(\\.{_PRERELEASE})*)?"
    f"(\\+{_BUILD}(\\.{_BUILD})*)?\\Z"
)
ONLY_WITH_PER_DEVICE = (
    "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` "
    "is set to true in the ResourceSlice spec"
)
ONE_PER_DEVICE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)


def quantity(value: Any) -> Quantity:
    """A decoded Quantity (zero when absent; the decoder refuses unreadable ones)."""
    try:
        return parse(str(value)) if value is not None else Quantity(Decimal(0))
    except QuantityError:
        return Quantity(Decimal(0))


def attribute_values(device: Obj) -> int:
    """``numEntriesDeviceAttribute``: a scalar counts one, a list its items."""
    total = 0
    for attribute in map(obj, obj(device.get("attributes")).values()):
        listed = sum(len(items(attribute.get(key))) for key in LIST_VALUES)
        total += listed or 1
    return total


def validate_device(
    device: Obj, old: Obj | None, path: str, per_device: bool | None
) -> list[FieldError]:
    """``validateDevice``; ``old``: the stored device of that name, ``per_device``: the
    slice's perDeviceNodeSelection."""
    errs = dns_label(text(device.get("name")), f"{path}.name")
    attributes, capacity = obj(device.get("attributes")), obj(device.get("capacity"))
    count = len(attributes) + len(capacity)
    if count > MAX_ATTRIBUTES_AND_CAPACITIES:
        detail = f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"
        errs.append(field.invalid(path, count, detail))
    values = attribute_values(device)
    if values > MAX_ATTRIBUTE_VALUES:
        detail = f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"
        errs.append(field.invalid(path, values, detail))
    key_length = ATTRIBUTE_KEY_MAX_LENGTH
    errs += validate_map(
        attributes, -1, key_length, qualified_name, _attribute, f"{path}.attributes"
    )
    check = _multi_capacity if device.get("allowMultipleAllocations") is True else _single_capacity
    errs += validate_map(capacity, -1, key_length, qualified_name, check, f"{path}.capacity")
    taints = device.get("taints")
    if old is None or not same("[]dra.DeviceTaint", taints, old.get("taints")):
        errs += validate_slice(taints, TAINTS_MAX_LENGTH, device_taint, f"{path}.taints")
    errs += validate_set(
        device.get("consumesCounters"),
        MAX_COUNTER_CONSUMPTIONS,
        _consumption,
        lambda c: text(obj(c).get("counterSet")),
        f"{path}.consumesCounters",
    )
    errs += _node_selection(device, path, per_device)
    errs += binding_parameters(device, path)
    mappings = device.get("nodeAllocatableResourceMappings")
    return errs + _mappings(obj(mappings), capacity, f"{path}.nodeAllocatableResourceMappings")


def _node_selection(device: Obj, path: str, per_device: bool | None) -> list[FieldError]:
    name, selector, all_nodes = (device.get(k) for k in ("nodeName", "nodeSelector", "allNodes"))
    if not per_device:
        if name is not None or selector is not None or all_nodes is not None:
            return [field.invalid(path, None, ONLY_WITH_PER_DEVICE)]
        return []
    errs: list[FieldError] = []
    chosen: list[str] = []
    if name is not None:
        if text(name):
            chosen.append("`nodeName`")
            errs += node_name(text(name), f"{path}.nodeName")
        else:
            errs.append(field.invalid(f"{path}.nodeName", "", "must not be empty"))
    if selector is not None:
        chosen.append("`nodeSelector`")
        errs += node_selector(obj(selector), f"{path}.nodeSelector")
    if all_nodes is not None:
        if all_nodes is True:
            chosen.append("`allNodes`")
        else:
            errs.append(
                field.invalid(f"{path}.allNodes", False, "must be either unset or set to true")
            )
    if not chosen:
        errs.append(field.required(path, ONE_PER_DEVICE))
    elif len(chosen) > 1:
        errs.append(field.invalid(path, "{" + ", ".join(chosen) + "}", ONE_PER_DEVICE))
    return errs


# -- attributes -------------------------------------------------------------------------


def _attribute(attribute: Any, path: str) -> list[FieldError]:
    """``validateDeviceAttribute``: exactly one value, strings and versions bounded."""
    attribute = obj(attribute)
    errs: list[FieldError] = []
    present = 0
    for key in ("bool", "int", "string", "version"):
        if attribute.get(key) is None:
            continue
        present += 1
        if key in ("string", "version"):
            errs += _string_value(key, text(attribute[key]), f"{path}.{key}")
    for key in LIST_VALUES:
        values = attribute.get(key)
        if values is None:
            continue
        present += 1
        if not values:
            detail = "must not be empty if specified"
            errs.append(field.invalid(f"{path}.{key}", [], detail))
        if key in ("strings", "versions"):
            for i, value in enumerate(items(values)):
                errs += _string_value(key[:-1], text(value), f"{path}.{key}[{i}]")
    if present == 0:
        errs.append(field.invalid(path, "", "exactly one value must be specified"))
    elif present > 1:
        shown = go_text("dra.DeviceAttribute", attribute)
        errs.append(field.invalid(path, shown, "exactly one value must be specified"))
    return errs


def _string_value(kind: str, value: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if kind == "version" and not _SEMVER.match(value):
        detail = "must be a string compatible with semver.org spec 2.0.0"
        errs.append(field.invalid(path, value, detail))
    if size(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(field.too_long(path, ATTRIBUTE_MAX_VALUE_LENGTH))
    return errs


# -- capacities -------------------------------------------------------------------------


def _single_capacity(capacity: Any, path: str) -> list[FieldError]:
    if obj(capacity).get("requestPolicy") is None:
        return []
    return [field.forbidden(f"{path}.requestPolicy", "allowMultipleAllocations must be true")]


def _multi_capacity(capacity: Any, path: str) -> list[FieldError]:
    """``validateRequestPolicy``: valid values or a valid range, with a default."""
    capacity = obj(capacity)
    policy = capacity.get("requestPolicy")
    if policy is None:
        return []
    policy, at = obj(policy), f"{path}.requestPolicy"
    maximum = quantity(capacity.get("value"))
    valid_values, valid_range = items(policy.get("validValues")), policy.get("validRange")
    if valid_values and valid_range is not None:
        detail = 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
        return [field.forbidden(at, detail)]
    default = policy.get("default")
    if valid_values:
        if default is None:
            return [field.required(f"{at}.default", "required when validValues is defined")]
        values = [quantity(v) for v in valid_values]
        return _valid_values(quantity(default), maximum, values, f"{at}.validValues")
    if valid_range is not None:
        if default is None:
            return [field.required(f"{at}.default", "required when validRange is defined")]
        return _valid_range(quantity(default), maximum, obj(valid_range), f"{at}.validRange")
    return []


def _valid_values(
    default: Quantity, maximum: Quantity, values: list[Quantity], path: str
) -> list[FieldError]:
    errs = [
        field.invalid(f"{path}[{i + 1}]", str(b), "values must be sorted in ascending order")
        for i, (a, b) in enumerate(itertools.pairwise(values))
        if a.value > b.value
    ]
    found = any(v.value == default.value for v in values) and len(values) <= DISCRETE_MAX_OPTIONS

    def option(value: Quantity, at: str) -> list[FieldError]:
        if value.value > maximum.value:
            detail = f"option is larger than capacity value: {maximum}"
            return [field.invalid(at, str(value), detail)]
        return []

    errs += validate_set(values, DISCRETE_MAX_OPTIONS, option, lambda q: str(q.int_value()), path)
    if not found:
        detail = "default value is not valid according to the requestPolicy"
        errs.append(field.invalid(path, str(default), detail))
    return errs


def _valid_range(
    default: Quantity, maximum: Quantity, valid_range: Obj, path: str
) -> list[FieldError]:
    if valid_range.get("min") is None:
        return [field.required(f"{path}.min", "required when validRange is defined")]
    low = quantity(valid_range["min"])
    errs: list[FieldError] = []
    at_min, at_max, at_step = f"{path}.min", f"{path}.max", f"{path}.step"
    if low.value > maximum.value:
        detail = f"min is larger than capacity value: {maximum}"
        errs.append(field.invalid(at_min, str(low), detail))
    if default.value < low.value:
        errs.append(field.invalid(at_min, str(default), f"default is less than min: {low}"))
    high = quantity(valid_range["max"]) if valid_range.get("max") is not None else None
    if high is not None:
        if low.value > high.value:
            errs.append(field.invalid(at_max, str(low), f"min is larger than max: {high}"))
        if high.value > maximum.value:
            detail = f"max is larger than capacity value: {maximum}"
            errs.append(field.invalid(at_max, str(high), detail))
        if default.value > high.value:
            errs.append(field.invalid(at_max, str(default), f"default is more than max: {high}"))
    if valid_range.get("step") is not None:
        step = quantity(valid_range["step"])
        added = format_quantity(low.value + step.value, low.format if low.value else step.format)
        if low.value + step.value > maximum.value:
            detail = f"one step {added} is larger than capacity value: {maximum}"
            errs.append(field.invalid(at_step, str(step), detail))
        errs += _on_step(default, low, step, at_step)
        if high is not None:
            errs += _on_step(high, low, step, at_step)
    return errs


def _on_step(value: Quantity, low: Quantity, step: Quantity, path: str) -> list[FieldError]:
    """``validateRequestPolicyRangeStep``, in whole units (``Quantity.Value()``)."""
    step_value = step.int_value()
    if step_value and (value.int_value() - low.int_value()) % step_value:
        detail = f"value is not a multiple of a given step ({step}) from ({low})"
        return [field.invalid(path, str(value), detail)]
    return []


# -- counters and mappings --------------------------------------------------------------


def counter_set(counter_set: Any, path: str) -> list[FieldError]:
    """``validateCounterSet``: a named set of counters."""
    counter_set = obj(counter_set)
    name = text(counter_set.get("name"))
    errs = dns_label(name, f"{path}.name") if name else [field.required(f"{path}.name")]
    return errs + _counters(counter_set.get("counters"), f"{path}.counters")


def _consumption(consumption: Any, path: str) -> list[FieldError]:
    consumption = obj(consumption)
    name = text(consumption.get("counterSet"))
    at = f"{path}.counterSet"
    errs = dns_label(name, at) if name else [field.required(at)]
    return errs + _counters(consumption.get("counters"), f"{path}.counters")


def _counters(counters: Any, path: str) -> list[FieldError]:
    if not obj(counters):
        return [field.required(path)]
    return validate_map(counters, MAX_COUNTERS, COUNTER_KEY_LENGTH, dns_label, no_errors, path)


def _mappings(mappings: Obj, capacity: Obj, path: str) -> list[FieldError]:
    """``validateNodeAllocatableResourceMappings``."""
    errs: list[FieldError] = []
    for name, value in mappings.items():
        at, mapping = f"{path}[{name}]", obj(value)
        if not is_native(name):
            errs.append(field.invalid(at, name, "must be a node allocatable resource name"))
        multiplier, key = mapping.get("allocationMultiplier"), mapping.get("capacityKey")
        if multiplier is None and key is None:
            detail = "at least one of allocationMultiplier or capacityKey must be set"
            errs.append(field.invalid(at, "", detail))
            continue
        if multiplier is not None and quantity(multiplier).value <= 0:
            shown = str(quantity(multiplier))
            errs.append(field.invalid(f"{at}.allocationMultiplier", shown, "must be positive"))
        if key is not None:
            if not text(key):
                detail = "capacityKey must not be an empty string"
                errs.append(field.invalid(f"{at}.capacityKey", "", detail))
            elif text(key) not in capacity:
                errs.append(field.not_found(f"{at}.capacityKey", text(key)))
    return errs
