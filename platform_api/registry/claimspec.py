"""PersistentVolumeClaim specs (claims and StatefulSets' claim templates), as kube's
ValidatePersistentVolumeClaimSpec words what they most often get wrong."""

from __future__ import annotations

from typing import Any

from platform_api.quantity import canonical, parse_quantity
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import is_dns1123_subdomain

Obj = dict[str, Any]
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]


def validate_claim_spec(spec: Obj, at: str) -> list[FieldError]:
    modes: list[str] = spec.get("accessModes") or []
    errs: list[FieldError] = []
    if not modes:
        errs.append(field.required(f"{at}.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec["selector"], f"{at}.selector")
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(field.not_supported(f"{at}.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        detail = "may not use ReadWriteOncePod with other access modes"
        errs.append(field.forbidden(f"{at}.accessModes", detail))
    errs += _storage(((spec.get("resources") or {}).get("requests") or {}), at)
    storage_class = spec.get("storageClassName")
    if storage_class:
        where = f"{at}.storageClassName"
        errs += [
            field.invalid(where, storage_class, m) for m in is_dns1123_subdomain(storage_class)
        ]
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        errs.append(field.not_supported(f"{at}.volumeMode", volume_mode, VOLUME_MODES))
    return errs


def _storage(requests: Obj, at: str) -> list[FieldError]:
    where = f"{at}.resources[storage]"  # kube's path names no "requests"
    if "storage" not in requests:
        return [field.required(where)]
    amount = str(requests["storage"])
    try:
        value = parse_quantity(amount)
    except ValueError:
        return []  # the schema decoder refused malformed quantities already
    errs = []
    if value <= 0:
        errs.append(field.invalid(where, canonical(amount), "must be greater than zero"))
    if value < 0:
        errs.append(field.invalid(where, canonical(amount), field.NONNEGATIVE))
    return errs
