"""PersistentVolumeClaims after creation, as kube-apiserver v1.36 treats them: the data
sources its strategy completes, ValidatePersistentVolumeClaimUpdate, the status rules
of ValidatePersistentVolumeClaimStatusUpdate and the claim's warnings.

A claim's spec is fixed once created, but for a volumeName set once, a class set where
there was none (or where the beta annotation named it), and, once bound, a storage
request (which may shrink back to no less than the capacity) and its attributes class.
kube's refusal embeds a diff of the internal spec structs (``gointernal``).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.registry.claimspec import basic_resource, validate_claim_spec
from platform_api.registry.gointernal import go_value, same, struct_diff
from platform_api.registry.quota_validation import is_native
from platform_api.validation import field
from platform_api.validation.field import FieldError, go_quote
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import is_qualified_name

Obj = dict[str, Any]
SPEC_TYPE = "core.PersistentVolumeClaimSpec"
STORAGE_CLASS = "volume.beta.platform.io/storage-class"  # kube's volume.beta.kubernetes.io/...
SNAPSHOT_GROUPS = ("snapshot.storage.platform.io", "snapshot.storage.k8s.io")
SPEC_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)
RESIZE_STATUSES = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
]
CURRENT_CLASS = "status.currentVolumeAttributesClassName is not nil"


def _copied_reference(ref: Obj) -> Obj:
    out = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    if ref.get("apiGroup") is not None:
        out["apiGroup"] = ref["apiGroup"]
    return out


def _claim_or_snapshot(source: Any) -> bool:
    if not isinstance(source, dict):
        return False
    group, kind = source.get("apiGroup") or "", source.get("kind")
    return (kind == "PersistentVolumeClaim" and not group) or (
        kind == "VolumeSnapshot" and group in SNAPSHOT_GROUPS
    )


def prepare_data_sources(spec: Obj, old_spec: Obj | None) -> None:
    """kube's strategy on create and update: a cross-namespace dataSourceRef is dropped
    (CrossNamespaceVolumeDataSource is off), a new dataSource that is neither a claim nor
    a snapshot is dropped when no dataSourceRef backs it, then each of the two is
    completed from the other (NormalizeDataSources)."""
    old = old_spec or {}
    ref = spec.get("dataSourceRef")
    if isinstance(ref, dict) and ref.get("namespace") and old.get("dataSourceRef") is None:
        spec.pop("dataSourceRef")
    had_source = old.get("dataSource") is not None or old.get("dataSourceRef") is not None
    backed = had_source or spec.get("dataSourceRef") is not None
    if not backed and not _claim_or_snapshot(spec.get("dataSource")):
        spec.pop("dataSource", None)
    normalize_data_sources(spec)


def normalize_data_sources(spec: Obj) -> None:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = _copied_reference(source)
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = _copied_reference(ref)


def _value(amount: Any) -> Decimal:
    try:
        return parse(str(amount)).value
    except QuantityError:
        return Decimal(0)


def _storage(holder: Any) -> Decimal:
    """A ResourceList's storage (a Go map's zero Quantity when absent)."""
    amount = holder.get("storage") if isinstance(holder, dict) else None
    return Decimal(0) if amount is None else _value(amount)


def _class_upgrade(old: Obj, new: Obj, old_spec: Obj, spec: Obj) -> tuple[bool, bool]:
    """(from the annotation, from nil): the two ways a class may be set on a claim."""
    old_ann = old["metadata"].get("annotations") or {}
    new_ann = new["metadata"].get("annotations") or {}
    before, after = old_spec.get("storageClassName"), spec.get("storageClassName")
    from_annotation = (
        STORAGE_CLASS in old_ann
        and before is None
        and after is not None
        and after == old_ann[STORAGE_CLASS]
        and (STORAGE_CLASS not in new_ann or new_ann[STORAGE_CLASS] == old_ann[STORAGE_CLASS])
    )
    from_nil = (
        after is not None
        and before is None
        and (STORAGE_CLASS not in old_ann or after == old_ann[STORAGE_CLASS])
    )
    return from_annotation, from_nil


def _spec_change(new: Obj, old: Obj, spec: Obj, old_spec: Obj) -> list[FieldError]:
    """The annotation's and the spec's immutability, but for what a claim may change."""
    after, before = copy.deepcopy(spec), copy.deepcopy(old_spec)
    if not old_spec.get("volumeName"):
        before["volumeName"] = after.get("volumeName", "")
    errs: list[FieldError] = []
    from_annotation, from_nil = _class_upgrade(old, new, old_spec, spec)
    if from_annotation:
        after.pop("storageClassName", None)
    else:
        value = (new["metadata"].get("annotations") or {}).get(STORAGE_CLASS, "")
        if value != (old["metadata"].get("annotations") or {}).get(STORAGE_CLASS, ""):
            at = f"metadata.annotations.{STORAGE_CLASS}"
            errs.append(field.invalid(at, value, "field is immutable"))
        if from_nil:
            after.pop("storageClassName", None)
    if (new.get("status") or {}).get("phase") == "Bound":
        requests = (after.get("resources") or {}).get("requests")
        if isinstance(requests, dict):
            old_requests = (before.get("resources") or {}).get("requests") or {}
            requests["storage"] = old_requests.get("storage", "0")
        _set(after, "volumeAttributesClassName", before.get("volumeAttributesClassName"))
    if not same(SPEC_TYPE, before, after):
        diff = struct_diff(go_value(SPEC_TYPE, before), go_value(SPEC_TYPE, after))
        errs.append(field.forbidden("spec", f"{SPEC_IMMUTABLE}\n{diff}"))
    return errs


def _set(spec: Obj, key: str, value: Any) -> None:
    if value is None:
        spec.pop(key, None)
    else:
        spec[key] = value


def update_options(new: Obj, old: Obj) -> dict[str, bool]:
    """kube's ValidationOptionsForPersistentVolumeClaim: what an old claim already held."""
    old_spec = old.get("spec") or {}
    groups = [(old_spec.get(key) or {}).get("apiGroup") for key in ("dataSource", "dataSourceRef")]
    selector = old_spec.get("selector")
    return {
        "allow_invalid_api_group": any(group is not None for group in groups),
        "allow_invalid_selector": selector is not None
        and bool(validate_label_selector(selector, "")),
    }


def validate_claim_update(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimUpdate`` but for the metadata's generic rules."""
    spec, old_spec = new.get("spec") or {}, copy.deepcopy(old.get("spec") or {})
    normalize_data_sources(old_spec)  # kube's PrepareForUpdate normalizes the old one too
    errs = validate_claim_spec(spec, "spec", **update_options(new, old))
    errs += _spec_change(new, old, spec, old_spec)
    # RecoverVolumeExpansionFailure (GA): a request shrinks down to above the capacity
    size = _storage((spec.get("resources") or {}).get("requests"))
    shrinks = size < _storage((old_spec.get("resources") or {}).get("requests"))
    if shrinks and size <= _storage((old.get("status") or {}).get("capacity")):
        detail = "field can not be less than status.capacity"
        errs.append(field.forbidden("spec.resources.requests.storage", detail))
    mode = spec.get("volumeMode")
    if mode != old_spec.get("volumeMode"):
        errs.append(field.invalid("volumeMode", mode, "field is immutable"))
    return errs + _attributes_class_update(new, old)


def _attributes_class_update(new: Obj, old: Obj) -> list[FieldError]:
    after = (new.get("spec") or {}).get("volumeAttributesClassName")
    before = (old.get("spec") or {}).get("volumeAttributesClassName")
    current = (old.get("status") or {}).get("currentVolumeAttributesClassName")
    if after == before or current is None:
        return []
    at = "spec.volumeAttributesClassName"
    if after is None:
        return [field.forbidden(at, f"update to nil is forbidden when {CURRENT_CLASS}")]
    if after == "":
        return [field.forbidden(at, f"update to empty string is forbidden when {CURRENT_CLASS}")]
    return []


def _resource_key(name: str, at: str) -> list[FieldError]:
    """``validatePersistentVolumeClaimResourceKey``: a qualified name; of the native
    names (unprefixed or under platform.io/), only storage."""
    errs = [field.invalid(at, name, m) for m in is_qualified_name(name)]
    if not errs and is_native(name) and name != "storage":
        errs.append(field.not_supported(at, name, ["storage"]))
    return errs


def validate_claim_status(new: Obj) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimStatusUpdate`` but for the metadata's rules.  kube
    walks Go maps here, in no fixed order; this walks them sorted."""
    status = new.get("status") or {}
    errs: list[FieldError] = []
    if not (new.get("spec") or {}).get("accessModes"):
        errs.append(field.required("Spec.accessModes"))  # kube's capital S
    capacity = status.get("capacity") or {}
    for name in sorted(capacity):
        errs += basic_resource(capacity[name], f"status.capacity[{name}]")
    at = "status.allocatedResourceStatuses"
    statuses = status.get("allocatedResourceStatuses") or {}
    for name in sorted(statuses):
        errs += _resource_key(name, at)
        if statuses[name] not in RESIZE_STATUSES:
            errs.append(field.not_supported(at, name, RESIZE_STATUSES))
    at = "status.allocatedResources"
    allocated = status.get("allocatedResources") or {}
    for name in sorted(allocated):
        errs += _resource_key(name, at) or basic_resource(allocated[name], f"{at}[{name}]")
    return errs


def claim_warnings(obj: Obj) -> list[str]:
    """kube's GetWarningsForPersistentVolumeClaim."""
    warnings: list[str] = []
    if STORAGE_CLASS in ((obj.get("metadata") or {}).get("annotations") or {}):
        warnings.append(
            f"metadata.annotations[{STORAGE_CLASS}]: "
            'deprecated since v1.8; use "storageClassName" attribute instead'
        )
    return warnings + claim_spec_warnings(obj.get("spec") or {}, "spec")


def claim_spec_warnings(spec: Obj, path: str) -> list[str]:
    """kube's GetWarningsForPersistentVolumeClaimSpec: storage of a fraction of a byte
    (claims, and the templates of ephemeral volumes and StatefulSets)."""
    resources = spec.get("resources") or {}
    return [
        warning
        for kind in ("requests", "limits")
        for warning in fractional_bytes(
            resources.get(kind) or {}, f"{path}.resources.{kind}", ("storage",)
        )
    ]


def fractional_bytes(amounts: Obj, at: str, names: tuple[str, ...]) -> list[str]:
    """kube's warning for each of ``names`` in ``amounts`` that asks for a fraction of
    a byte (``at[name]: fractional byte value "1500m" is invalid``)."""
    warnings = []
    for name in names:
        if name not in amounts:
            continue
        try:
            quantity = parse(str(amounts[name]))
        except QuantityError:
            continue
        if quantity.milli_value() % 1000:
            warnings.append(
                f"{at}[{name}]: fractional byte value {go_quote(str(quantity))} is invalid, "
                "must be an integer"
            )
    return warnings
