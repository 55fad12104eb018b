"""A ResourceClaim's status, as kube's ``validateResourceClaimStatusUpdate`` checks writes
through ``/status``: who the claim is reserved for, the allocation (checked when it is
first set, immutable after) and the drivers' per-device status.

A device is known by driver, pool, device name and share ID (kube's SharedDeviceID);
each status entry must name an allocated device, and an entry of a device no longer
allocated is dropped by the status write's preparation.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import Struct, marshal
from platform_api.registry.deviceclaims import (
    CONFIG_MAX_SIZE,
    REQUESTS_MAX_SIZE,
    RequestNames,
    device_configuration,
    request_ref,
    request_refs,
)
from platform_api.registry.dranames import (
    IMMUTABLE,
    Obj,
    binding_parameters,
    dns_label,
    driver_name,
    items,
    node_selector,
    obj,
    pool_name,
    raw_extension,
    size,
    text,
    uid,
    validate_set,
    validate_slice,
)
from platform_api.registry.gointernal import go_text, same
from platform_api.validation import field
from platform_api.validation.conditions import validate_conditions
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.ips import go_string, parse_cidr_sloppy

RESERVED_FOR_MAX_SIZE = 256
MAX_CONDITIONS = 8
DATA_MAX_LENGTH = 10 * 1024
INTERFACE_NAME_MAX_LENGTH = 256
HARDWARE_ADDRESS_MAX_LENGTH = 128
MAX_IPS = 16
CONFIG_SOURCES = ["FromClaim", "FromClass"]
DeviceID = tuple[str, str, str, str]


def device_id(entry: Any) -> DeviceID:
    """kube's SharedDeviceID of an allocation result or a device status entry."""
    entry = obj(entry)
    get = entry.get
    return text(get("driver")), text(get("pool")), text(get("device")), text(get("shareID"))


def _shown(device: DeviceID) -> GoText:
    """A SharedDeviceID as json.Marshal writes it (its parts marshal as strings)."""
    names = ("Driver", "Pool", "Device", "ShareID")
    return GoText(marshal(Struct(zip(names, device, strict=True))))


def allocated_devices(status: Obj) -> set[DeviceID]:
    allocation = obj(status.get("allocation"))
    return {device_id(r) for r in items(obj(allocation.get("devices")).get("results"))}


def validate_status_update(
    status: Obj, old: Obj, deleted: bool, names: RequestNames
) -> list[FieldError]:
    """``validateResourceClaimStatusUpdate`` (``deleted``: the claim has a
    deletionTimestamp)."""
    reserved = items(status.get("reservedFor"))
    errs = validate_set(
        reserved,
        RESERVED_FOR_MAX_SIZE,
        _consumer,
        lambda ref: text(obj(ref).get("uid")),
        "status.reservedFor",
    )
    allocation = status.get("allocation")
    allocated = allocated_devices(status) if allocation is not None else set()
    errs += validate_set(
        status.get("devices"),
        -1,
        lambda device, at: _device_status(obj(device), at, allocated),
        device_id,
        "status.devices",
        _shown,
    )
    if reserved and allocation is None:
        detail = "may not be specified when `allocated` is not set"
        errs.append(field.forbidden("status.reservedFor", detail))
    elif reserved and deleted and _added(reserved, items(old.get("reservedFor"))):
        detail = "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"
        errs.append(field.forbidden("status.reservedFor", detail))
    before = old.get("allocation")
    if before is not None and allocation is not None:
        if not same("*dra.AllocationResult", allocation, before):
            shown = go_text("*dra.AllocationResult", allocation)
            errs.append(field.invalid("status.allocation", shown, IMMUTABLE))
    elif allocation is not None:
        errs += validate_allocation(obj(allocation), "status.allocation", names)
    return errs


def _consumer(ref: Any, path: str) -> list[FieldError]:
    ref = obj(ref)
    return [
        field.required(f"{path}.{key}")
        for key in ("resource", "name", "uid")
        if not text(ref.get(key))
    ]


def _added(new: list[Any], old: list[Any]) -> bool:
    keys = ("apiGroup", "resource", "name", "uid")
    before = {tuple(text(obj(r).get(k)) for k in keys) for r in old}
    return any(tuple(text(obj(r).get(k)) for k in keys) not in before for r in new)


def validate_allocation(allocation: Obj, path: str, names: RequestNames) -> list[FieldError]:
    """``validateAllocationResult`` of a new allocation."""
    devices = obj(allocation.get("devices"))
    at = f"{path}.devices"
    errs = validate_slice(
        devices.get("results"),
        REQUESTS_MAX_SIZE,
        lambda result, where: _result(obj(result), where, names),
        f"{at}.results",
    )
    errs += validate_slice(
        devices.get("config"),
        2 * CONFIG_MAX_SIZE,  # the class's and the claim's
        lambda config, where: _allocation_config(obj(config), where, names),
        f"{at}.config",
    )
    selector = allocation.get("nodeSelector")
    if selector is not None:
        errs += node_selector(obj(selector), f"{path}.nodeSelector")
    return errs


def _result(result: Obj, path: str, names: RequestNames) -> list[FieldError]:
    errs = request_ref(result.get("request"), f"{path}.request", names)
    errs += driver_name(text(result.get("driver")), f"{path}.driver")
    errs += pool_name(text(result.get("pool")), f"{path}.pool")
    errs += dns_label(text(result.get("device")), f"{path}.device")
    errs += binding_parameters(result, path)
    if result.get("shareID") is not None:
        errs += uid(text(result.get("shareID")), f"{path}.shareID")
    return errs


def _allocation_config(config: Obj, path: str, names: RequestNames) -> list[FieldError]:
    source = text(config.get("source"))
    errs: list[FieldError] = []
    if not source:
        errs.append(field.required(f"{path}.source"))
    elif source not in CONFIG_SOURCES:
        errs.append(field.not_supported(f"{path}.source", source, CONFIG_SOURCES))
    errs += request_refs(config.get("requests"), f"{path}.requests", names)
    return errs + device_configuration(config, path, False)


def _device_status(device: Obj, path: str, allocated: set[DeviceID]) -> list[FieldError]:
    errs = driver_name(text(device.get("driver")), f"{path}.driver")
    errs += pool_name(text(device.get("pool")), f"{path}.pool")
    errs += dns_label(text(device.get("device")), f"{path}.device")
    if device.get("shareID") is not None:
        errs += uid(text(device.get("shareID")), f"{path}.shareID")
    key = device_id(device)
    if key not in allocated:
        errs.append(field.invalid(path, _shown(key), "must be an allocated device in the claim"))
    conditions = items(device.get("conditions"))
    if len(conditions) > MAX_CONDITIONS:
        errs.append(field.too_many(f"{path}.conditions", len(conditions), MAX_CONDITIONS))
    errs += validate_conditions(conditions, f"{path}.conditions")
    data = device.get("data")
    if data is not None:
        errs += raw_extension(data, f"{path}.data", False, DATA_MAX_LENGTH)
    network = device.get("networkData")
    if network is not None:
        errs += _network_data(obj(network), f"{path}.networkData")
    return errs


def _network_data(data: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, limit in (
        ("interfaceName", INTERFACE_NAME_MAX_LENGTH),
        ("hardwareAddress", HARDWARE_ADDRESS_MAX_LENGTH),
    ):
        if size(text(data.get(key))) > limit:
            errs.append(field.too_long(f"{path}.{key}", limit))
    return errs + validate_set(data.get("ips"), MAX_IPS, _interface_address, text, f"{path}.ips")


def _interface_address(value: Any, path: str) -> list[FieldError]:
    """apimachinery's ``IsValidInterfaceAddress``: a CIDR-form address, canonical."""
    value = text(value)
    parsed = parse_cidr_sloppy(value)
    if parsed is None:
        detail = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
        return [field.invalid(path, value, detail)]
    ip, length, _ = parsed
    mapped = getattr(ip, "ipv4_mapped", None)
    # Go prints an IPv4-mapped address as IPv4, with the IPv6 prefix length less 96
    canonical = f"{mapped}/{length - 96}" if mapped is not None else f"{go_string(ip)}/{length}"
    if value != canonical:
        return [field.invalid(path, value, f'must be in canonical form ("{canonical}")')]
    return []
