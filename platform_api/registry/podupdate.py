"""What an update may change in a running pod's spec (kube's ValidatePodUpdate): the
images, a shorter active deadline, added tolerations, a negative grace period set to 1.
Anything else is refused with kube's list of what may change and a diff of the rest, as
kube writes it: of its internal Go types (gointernal.py).  Ephemeral containers, once
added, may not change at all."""

from __future__ import annotations

import copy
from typing import Any

from platform_api.registry.gointernal import go_value, same, struct_diff
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
UPDATABLE = ",".join(
    [
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)",
    ]
)
_MAX_INT32 = 2147483647
SPEC = "core.PodSpec"
EPHEMERAL = "core.EphemeralContainer"


def validate_pod_update(new: Obj, old: Obj) -> list[FieldError]:
    """The update rules, in kube's order; a refusal of containers added or removed stops
    there, as kube's does."""
    errs: list[FieldError] = []
    for key in ("containers", "initContainers"):
        found, stop = _container_updates(new.get(key) or [], old.get(key) or [], f"spec.{key}")
        errs += found
        if stop:
            return errs
    found, stop = _deadline(new.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds"))
    errs += found
    if stop:
        return errs
    errs += _only_added_tolerations(new.get("tolerations") or [], old.get("tolerations") or [])
    if plain(new) == plain(old):
        return errs
    munged = _munged(new, old)
    if not same(SPEC, munged, old):
        detail = f"pod updates may not change fields other than {UPDATABLE}\n"
        errs.append(field.forbidden("spec", detail + internal_diff(SPEC, old, munged)))
    return errs


def validate_ephemeral_update(new: list[Obj], old: list[Obj]) -> list[FieldError]:
    """Ephemeral containers, once added, stay as they are (kube's
    ValidatePodEphemeralContainersUpdate), matched by name: patches do not keep order."""
    errs: list[FieldError] = []
    kept = {c.get("name"): c for c in new}
    for before in old:
        name = before.get("name", "")
        after = kept.get(name)
        if after is None:
            why = f'existing ephemeral containers "{name}" may not be removed\n'
            errs.append(field.forbidden("spec.ephemeralContainers", why))
        elif not same(EPHEMERAL, after, before):
            why = f'existing ephemeral containers "{name}" may not be changed\n'
            why += internal_diff(EPHEMERAL, before, after)
            errs.append(field.forbidden("spec.ephemeralContainers", why))
    return errs


def _container_updates(new: list[Obj], old: list[Obj], path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [field.forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, container in enumerate(new):
        image = container.get("image") or ""
        if not image:
            errs.append(field.required(f"{path}[{i}].image"))
        if image != image.strip():
            detail = "must not have leading or trailing whitespace"
            errs.append(field.invalid(f"{path}[{i}].image", image, detail))
    return errs, False


def _deadline(new: Any, old: Any) -> tuple[list[FieldError], bool]:
    """The deadline's errors, and whether kube stops there: a value out of range or
    raised stops it; one removed is reported with the rest."""
    at = "spec.activeDeadlineSeconds"
    if new is None:
        if old is not None:
            why = "must not update from a positive integer to nil value"
            return [field.invalid(at, None, why)], False
        return [], False
    if not 0 <= new <= _MAX_INT32:
        return [field.invalid(at, new, f"must be between 0 and {_MAX_INT32}, inclusive")], True
    if old is not None and old < new:
        return [field.invalid(at, new, "must be less than or equal to previous value")], True
    return [], False


def _only_added_tolerations(new: list[Obj], old: list[Obj]) -> list[FieldError]:
    """Every existing toleration kept (its tolerationSeconds may change)."""
    kept = {_identity(t) for t in new}
    if all(_identity(t) in kept for t in old):
        return []
    detail = "existing toleration can not be modified except its tolerationSeconds"
    return [field.forbidden("spec.tolerations", detail)]


def _identity(toleration: Obj) -> tuple[str, ...]:
    return tuple(toleration.get(k) or "" for k in ("key", "operator", "value", "effect"))


def _munged(new: Obj, old: Obj) -> Obj:
    """``new`` with what may change taken from ``old``: equal to ``old`` when nothing
    else changed."""
    munged = copy.deepcopy(new)
    for key in ("containers", "initContainers"):
        for container, before in zip(munged.get(key) or [], old.get(key) or [], strict=False):
            container["image"] = before.get("image")
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        munged.pop(key, None)
        if key in old:
            munged[key] = old[key]
    grace = old.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = grace
    return munged


def plain(value: Any) -> Any:
    """For comparing as kube's semantic equality does: an empty list is no list."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def internal_diff(type_name: str, old: Obj, new: Obj) -> str:
    """kube's diff of the two as its internal Go type ``type_name`` writes them (Go
    field names in declaration order, zero values included)."""
    return struct_diff(go_value(type_name, old), go_value(type_name, new))
