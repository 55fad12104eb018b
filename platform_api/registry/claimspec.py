"""PersistentVolumeClaim specs (claims and StatefulSets' claim templates), as kube's
ValidatePersistentVolumeClaimSpec checks them: access modes, the storage request, class
names, the volume mode and the data source (``dataSource`` / ``dataSourceRef``).

kube leaves ``resources.limits`` unchecked (it only warns of fractional bytes, see
``claimupdate``); so does this module.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

Obj = dict[str, Any]
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]
DEFAULT_GROUP_KIND = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"


def access_mode_errors(modes: list[str], at: str) -> list[FieldError]:
    """Supported modes; ReadWriteOncePod alone (claims' and volumes' rule)."""
    errs = [
        field.not_supported(at, mode, ACCESS_MODES) for mode in modes if mode not in ACCESS_MODES
    ]
    others = [mode for mode in modes if mode in ACCESS_MODES and mode != "ReadWriteOncePod"]
    if "ReadWriteOncePod" in modes and others:
        errs.append(field.forbidden(at, "may not use ReadWriteOncePod with other access modes"))
    return errs


def class_name_errors(name: str, at: str) -> list[FieldError]:
    """``ValidateClassName`` of a set name (an empty one is no class)."""
    return [field.invalid(at, name, m) for m in is_dns1123_subdomain(name)] if name else []


def validate_claim_spec(
    spec: Obj,
    at: str,
    *,
    allow_invalid_selector: bool = False,
    allow_invalid_api_group: bool = False,
) -> list[FieldError]:
    """The ``allow_`` options are kube's, set on updates of claims already holding one."""
    modes: list[str] = spec.get("accessModes") or []
    errs: list[FieldError] = []
    if not modes:
        errs.append(field.required(f"{at}.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec["selector"], f"{at}.selector", allow_invalid_selector)
    errs += access_mode_errors(modes, f"{at}.accessModes")
    errs += _storage(((spec.get("resources") or {}).get("requests") or {}), at)
    errs += class_name_errors(spec.get("storageClassName") or "", f"{at}.storageClassName")
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        errs.append(field.not_supported(f"{at}.volumeMode", volume_mode, VOLUME_MODES))
    errs += _data_sources(spec, at, allow_invalid_api_group)
    name = spec.get("volumeAttributesClassName") or ""
    return errs + class_name_errors(name, f"{at}.volumeAttributesClassName")


def go_int_value(value: Decimal) -> int:
    """``Quantity.Value()``: the integer value, rounded away from zero."""
    magnitude = int(abs(value).to_integral_value(rounding=ROUND_CEILING))
    return -magnitude if value < 0 else magnitude


def basic_resource(amount: Any, at: str) -> list[FieldError]:
    """``validateBasicResource``: no negative quantity (kube shows its integer value)."""
    try:
        value = parse(str(amount)).value
    except QuantityError:
        return []  # the decoder refused it already
    if value < 0:
        return [field.invalid(at, go_int_value(value), "must be a valid resource quantity")]
    return []


def _storage(requests: Obj, at: str) -> list[FieldError]:
    where = f"{at}.resources[storage]"  # kube's path names no "requests"
    if "storage" not in requests:
        return [field.required(where)]
    try:
        quantity = parse(str(requests["storage"]))
    except QuantityError:
        return []  # the schema decoder refused malformed quantities already
    if quantity.value <= 0:
        return [field.invalid(where, str(quantity), "must be greater than zero")]
    return []


def _reference(ref: Obj, at: str, allow_invalid_group: bool) -> list[FieldError]:
    """``validateDataSource`` / ``validateDataSourceRef``: name and kind; a kind of the
    core group is a claim; a group is a DNS subdomain; a namespace is a namespace name."""
    errs = [field.required(f"{at}.{key}") for key in ("name", "kind") if not ref.get(key)]
    group, kind = ref.get("apiGroup") or "", ref.get("kind") or ""
    if not group and kind != "PersistentVolumeClaim":
        errs.append(field.invalid(at, kind, DEFAULT_GROUP_KIND))
    if group and not allow_invalid_group:
        errs += [field.invalid(f"{at}.apiGroup", group, m) for m in is_dns1123_subdomain(group)]
    namespace = ref.get("namespace") or ""
    if namespace:
        errs += [
            field.invalid(f"{at}.namespace", namespace, m) for m in is_dns1123_label(namespace)
        ]
    return errs


def same_reference(source: Obj, ref: Obj) -> bool:
    """kube's isDataSourceEqualDataSourceRef (an absent group is not an empty one)."""
    same_names = all((source.get(k) or "") == (ref.get(k) or "") for k in ("kind", "name"))
    return same_names and source.get("apiGroup") == ref.get("apiGroup")


def _data_sources(spec: Obj, at: str, allow_invalid_group: bool) -> list[FieldError]:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    errs: list[FieldError] = []
    if isinstance(source, dict):
        errs += _reference(source, f"{at}.dataSource", allow_invalid_group)
    if isinstance(ref, dict):
        errs += _reference(ref, f"{at}.dataSourceRef", allow_invalid_group)
    # kube's bad value here is a *field.Path, which JSON shows as {}
    if isinstance(ref, dict) and ref.get("namespace"):
        if source is not None:
            detail = "may not be specified when dataSourceRef.namespace is specified"
            errs.append(field.invalid(at, {}, detail))
    elif isinstance(source, dict) and isinstance(ref, dict) and not same_reference(source, ref):
        errs.append(field.invalid(at, {}, "must match dataSourceRef"))
    return errs
