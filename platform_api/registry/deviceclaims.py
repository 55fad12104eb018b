"""The device part of a ResourceClaim's spec (``spec.devices``, also a template's
``spec.spec.devices``): kube's ``validateDeviceClaim`` with its requests, subrequests,
constraints and configuration, and the defaults kube's decoder gives requests.

A request asks for ``exactly`` one kind of device or for the ``firstAvailable`` of
several subrequests; constraints and configuration name requests (``req`` or
``req/sub``), so those names are gathered first.  CEL selectors compile in
``deviceselectors``.
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.deviceselectors import validate_device_selector
from platform_api.registry.dranames import (
    Obj,
    device_toleration,
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    integer,
    items,
    obj,
    raw_extension,
    text,
    validate_set,
    validate_slice,
)
from platform_api.validation import field
from platform_api.validation.field import FieldError

CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
REQUESTS_MAX_SIZE = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize)
CONSTRAINTS_MAX_SIZE = 32
CONFIG_MAX_SIZE = 32
SELECTORS_MAX_SIZE = 32
FIRST_AVAILABLE_MAX_SIZE = 8
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
ALLOCATION_MODES = ["All", "ExactCount"]
REQUEST_REF = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
RequestNames = dict[str, set[str] | None]


# -- defaults ---------------------------------------------------------------------------


def default_device_claim(devices: Any) -> None:
    """SetDefaults_ExactDeviceRequest / _DeviceSubRequest and the tolerations' operator."""
    for request in items(obj(devices).get("requests")):
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _default_request(request["exactly"])
        for sub in items(request.get("firstAvailable")):
            if isinstance(sub, dict):
                _default_request(sub)


def _default_request(request: Obj) -> None:
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    default_tolerations(request.get("tolerations"))


def default_tolerations(tolerations: Any) -> None:
    for toleration in items(tolerations):
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


# -- request names ----------------------------------------------------------------------


def request_names(devices: Any) -> RequestNames:
    """``gatherRequestNames``: each request, with its subrequests' names if any."""
    names: RequestNames = {}
    for request in map(obj, items(obj(devices).get("requests"))):
        subs = items(request.get("firstAvailable"))
        names[text(request.get("name"))] = {text(obj(s).get("name")) for s in subs} or None
    return names


def _known(names: RequestNames, ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    subs = names[segments[0]]
    return len(segments) == 1 or (subs is not None and segments[1] in subs)


def request_ref(ref: Any, path: str, names: RequestNames) -> list[FieldError]:
    """``validateRequestNameRef``: ``request`` or ``request/subrequest`` of this claim."""
    ref = text(ref)
    segments = ref.split("/")
    if len(segments) > 2:
        return [field.invalid(path, ref, REQUEST_REF)]
    errs: list[FieldError] = []
    for segment in segments:
        errs += dns_label(segment, path)
    if not _known(names, ref):
        errs.append(field.invalid(path, ref, REQUEST_REF))
    return errs


def request_refs(refs: Any, path: str, names: RequestNames) -> list[FieldError]:
    """A set of request references (constraints', configurations')."""
    return validate_set(
        refs,
        REQUESTS_MAX_SIZE,
        lambda ref, at: request_ref(ref, at, names),
        text,
        path,
    )


# -- validation -------------------------------------------------------------------------


def validate_device_claim(
    devices: Any, path: str, stored: bool, consumable: bool = True
) -> list[FieldError]:
    """``validateDeviceClaim``: requests, then constraints, then configuration
    (``consumable``: the DRAConsumableCapacity gate, on in v1.36)."""
    devices = obj(devices)
    names = request_names(devices)
    errs = validate_set(
        devices.get("requests"),
        REQUESTS_MAX_SIZE,
        lambda request, at: _request(obj(request), at, stored),
        lambda request: text(obj(request).get("name")),
        f"{path}.requests",
    )
    errs += validate_slice(
        devices.get("constraints"),
        CONSTRAINTS_MAX_SIZE,
        lambda constraint, at: _constraint(obj(constraint), at, names, consumable),
        f"{path}.constraints",
    )
    errs += validate_slice(
        devices.get("config"),
        CONFIG_MAX_SIZE,
        lambda config, at: _claim_config(obj(config), at, names, stored),
        f"{path}.config",
    )
    return errs


def _request(request: Obj, path: str, stored: bool) -> list[FieldError]:
    errs = dns_label(text(request.get("name")), f"{path}.name")
    first = items(request.get("firstAvailable"))
    exactly = request.get("exactly")
    if first and exactly is not None:
        detail = (
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
        )
        errs.append(field.invalid(path, None, detail))
    elif first:
        errs += validate_set(
            first,
            FIRST_AVAILABLE_MAX_SIZE,
            lambda sub, at: _subrequest(obj(sub), at, stored),
            lambda sub: text(obj(sub).get("name")),
            f"{path}.firstAvailable",
        )
    elif exactly is not None:
        errs += exact_request(obj(exactly), f"{path}.exactly", stored)
    else:
        errs.append(
            field.required(path, "exactly one of `exactly` or `firstAvailable` is required")
        )
    return errs


def _subrequest(sub: Obj, path: str, stored: bool) -> list[FieldError]:
    errs = dns_label(text(sub.get("name")), f"{path}.name")
    return errs + exact_request(sub, path, stored)


def exact_request(request: Obj, path: str, stored: bool) -> list[FieldError]:
    """``validateExactDeviceRequest`` (a subrequest's fields after its name, too)."""
    errs = device_class_name(text(request.get("deviceClassName")), f"{path}.deviceClassName")
    errs += selectors(request.get("selectors"), f"{path}.selectors", stored)
    errs += _allocation_mode(request, path)
    for i, toleration in enumerate(items(request.get("tolerations"))):
        errs += device_toleration(toleration, f"{path}.tolerations[{i}]")
    return errs


def device_class_name(name: str, path: str) -> list[FieldError]:
    return dns_subdomain(name, path) if name else [field.required(path)]


def _allocation_mode(request: Obj, path: str) -> list[FieldError]:
    mode, count = text(request.get("allocationMode")), integer(request.get("count"))
    if mode == "All":
        if count:
            detail = f"must not be specified when allocationMode is '{mode}'"
            return [field.invalid(f"{path}.count", count, detail)]
    elif mode == "ExactCount":
        if count <= 0:
            return [field.invalid(f"{path}.count", count, "must be greater than zero")]
    else:
        return [field.not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES)]
    return []


def selectors(values: Any, path: str, stored: bool) -> list[FieldError]:
    """``validateSelectorSlice``: each selector needs its CEL expression."""
    return validate_slice(values, SELECTORS_MAX_SIZE, lambda s, at: selector(s, at, stored), path)


def selector(value: Any, path: str, stored: bool) -> list[FieldError]:
    cel = obj(value).get("cel")
    if cel is None:
        return [field.required(f"{path}.cel")]
    return validate_device_selector(text(obj(cel).get("expression")), f"{path}.cel", stored)


def _constraint(
    constraint: Obj, path: str, names: RequestNames, consumable: bool
) -> list[FieldError]:
    errs = request_refs(constraint.get("requests"), f"{path}.requests", names)
    match = constraint.get("matchAttribute")
    distinct = constraint.get("distinctAttribute")
    if match is not None:
        errs += fully_qualified_name(text(match), f"{path}.matchAttribute")
    elif distinct is not None:
        errs += fully_qualified_name(text(distinct), f"{path}.distinctAttribute")
    elif consumable:  # kube's wording, sic
        detail = 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set'
        errs.append(field.required(path, detail))
    else:
        errs.append(field.required(f"{path}.matchAttribute"))
    return errs


def _claim_config(config: Obj, path: str, names: RequestNames, stored: bool) -> list[FieldError]:
    errs = request_refs(config.get("requests"), f"{path}.requests", names)
    return errs + device_configuration(config, path, stored)


def device_configuration(config: Obj, path: str, stored: bool) -> list[FieldError]:
    """``validateDeviceConfiguration``: opaque, driver-specific parameters."""
    opaque = config.get("opaque")
    at = f"{path}.opaque"
    if opaque is None:
        return [field.required(at)]
    opaque = obj(opaque)
    errs = driver_name(text(opaque.get("driver")), f"{at}.driver")
    parameters = opaque.get("parameters")
    return errs + raw_extension(
        parameters, f"{at}.parameters", stored, OPAQUE_PARAMETERS_MAX_LENGTH
    )
