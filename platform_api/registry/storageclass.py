"""StorageClass and VolumeAttributesClass (storage.platform.io): kube's defaults,
validation and update rules for the two classes of storage.

Both name a driver (a provisioner, checked as a qualified name once lowercased) and
carry parameters (up to 512 entries, 256 KiB, no empty key).  A StorageClass defaults to
``Delete`` and ``Immediate`` and keeps its provisioner, parameters, reclaim policy and
binding mode; a VolumeAttributesClass needs a parameter and keeps driver and parameters
(refused as Forbidden, where a StorageClass's are Invalid).
"""

from __future__ import annotations

from platform_api.gotext import marshal
from platform_api.registry.csinode import GROUP
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import is_qualified_name

PARAMETERS_MAX_COUNT = 512
PARAMETERS_MAX_BYTES = 256 * 1024
RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]


def _provisioner(name: str, path: str) -> list[FieldError]:
    if not name:
        return [field.required(path)]
    return field.each(path, name.lower(), is_qualified_name)


def _parameters(parameters: dict[str, str]) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(parameters) > PARAMETERS_MAX_COUNT:
        errs.append(field.too_long("parameters", PARAMETERS_MAX_COUNT))
    if sum(len(k) + len(v) for k, v in parameters.items()) > PARAMETERS_MAX_BYTES:
        errs.append(field.too_long("parameters", PARAMETERS_MAX_BYTES))
    if "" in parameters:
        errs.append(field.invalid("parameters", "", "field can not be empty."))
    return errs


def _topologies(terms: list[Obj]) -> list[FieldError]:
    """kube's validateAllowedTopologies: each term's expressions, and no term twice."""
    errs: list[FieldError] = []
    seen: list[dict[str, list[str]]] = []
    for i, term in enumerate(terms):
        at = f"allowedTopologies[{i}].matchLabelExpressions"
        expressions: dict[str, list[str]] = {}
        for j, expr in enumerate(term.get("matchLabelExpressions") or []):
            where = f"{at}[{j}]"
            values = expr.get("values") or []
            found = [] if values else [field.required(f"{where}.values")]
            unique: set[str] = set()
            for k, value in enumerate(values):
                if value in unique:
                    found.append(field.duplicate(f"{where}.values[{k}]", value))
                unique.add(value)
            key = expr.get("key", "")
            found += field.each(f"{where}.key", key, is_qualified_name)
            if not found:
                expressions[key] = sorted(values)
            errs += found
        if expressions in seen:
            errs.append(field.duplicate(at, ""))
        seen.append(expressions)
    return errs


@defaults(GROUP, "StorageClass")
def _storage_class(obj: Obj) -> None:
    # pointers in kube's type: only an absent (nil) one is defaulted, not ""
    if obj.get("reclaimPolicy") is None:
        obj["reclaimPolicy"] = "Delete"
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = "Immediate"


def validate_storage_class(obj: Obj) -> list[FieldError]:
    errs = _provisioner(obj.get("provisioner", ""), "provisioner")
    errs += _parameters(obj.get("parameters") or {})
    policy = obj.get("reclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:  # kube's validateReclaimPolicy takes ""
        errs.append(field.not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode not in BINDING_MODES:
        errs.append(field.not_supported("volumeBindingMode", mode, BINDING_MODES))
    return errs + _topologies(obj.get("allowedTopologies") or [])


@register(GROUP, "StorageClass")
class StorageClassStrategy(GenericStrategy):
    update_meta_checks = "UC"
    returns_deleted_object = True  # as kube's store for the kind answers a delete

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_storage_class(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old) + validate_storage_class(new)
        for key in ("parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"):
            if new.get(key) != old.get(key):
                value = new.get(key)
                shown = GoText(marshal(value)) if isinstance(value, dict) else value
                if key in ("reclaimPolicy", "volumeBindingMode"):  # named Go types
                    shown = field.named(shown)
                errs.append(field.invalid(key, shown, "field is immutable"))
        return errs


def validate_attributes_class(obj: Obj) -> list[FieldError]:
    errs = _provisioner(obj.get("driverName", ""), "driverName")
    parameters = obj.get("parameters") or {}
    if not parameters:
        detail = "must contain at least one key/value pair"
        return [*errs, field.required("parameters", detail)]
    return errs + _parameters(parameters)


@register(GROUP, "VolumeAttributesClass")
class VolumeAttributesClassStrategy(GenericStrategy):
    returns_deleted_object = True  # as kube's store for the kind answers a delete

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_attributes_class(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old) + validate_attributes_class(new)
        for key in ("driverName", "parameters"):
            if new.get(key) != old.get(key):
                errs.append(field.forbidden(key, f"updates to {key} are forbidden."))
        return errs
