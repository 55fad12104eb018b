"""Object metadata validation: kube's ValidateObjectMeta and ValidateObjectMetaUpdate,
with their parts that other validators reuse (owner references, finalizers).

The syntax of names, label keys and values and annotations is names.py's.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import (
    is_dns1123_label,
    is_qualified_name,
    validate_annotations,
    validate_labels,
    validate_name,
)

# metav1.ObjectMeta's JSON keys in Go order (all omitempty).
OBJECT_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


_REF_ORDER = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")


def _go_ref(ref: dict[str, Any]) -> dict[str, Any]:
    return {k: ref[k] for k in _REF_ORDER if ref.get(k) not in (None, "")}


def _go_refs(refs: dict[str, Any] | list[dict[str, Any]]) -> GoText:
    """Owner references as Go's JSON writes them: their struct's field order."""
    value = [_go_ref(r) for r in refs] if isinstance(refs, list) else _go_ref(refs)
    return GoText(orjson.dumps(value).decode())


def _ref_version(api_version: str) -> str:
    """``schema.ParseGroupVersion``'s version: none when it does not parse."""
    if api_version.count("/") > 1:
        return ""
    return api_version.rpartition("/")[2]


def validate_owner_references(refs: list[dict[str, Any]], path: str) -> list[FieldError]:
    """kube's ValidateOwnerReferences: its field errors name no index."""
    errs: list[FieldError] = []
    controller = ""
    for ref in refs:
        api_version = ref.get("apiVersion", "")
        if not _ref_version(api_version):
            errs.append(
                field.invalid(f"{path}.apiVersion", api_version, "version must not be empty")
            )
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(field.invalid(f"{path}.{key}", ref.get(key, ""), "must not be empty"))
        if api_version == "v1" and ref.get("kind") == "Event":
            detail = "/v1, Kind=Event is disallowed from being an owner"
            errs.append(field.invalid(path, _go_refs(ref), detail))
        if ref.get("controller"):
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                errs.append(
                    field.invalid(
                        path,
                        _go_refs(refs),
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {controller} and {current}",
                    )
                )
            else:
                controller = current
    return errs


def validate_finalizers(finalizers: list[str], path: str) -> list[FieldError]:
    errs = []
    for name in finalizers:
        errs += [field.invalid(path, name, m) for m in is_qualified_name(name)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            field.invalid(
                path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"
            )
        )
    return errs


# Finalizers built-in kinds may name without a domain (core's IsStandardFinalizerName).
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_kube_finalizers(finalizers: list[str], path: str) -> list[FieldError]:
    """Core validation's extra check on built-in kinds (custom resources, CRDs and
    admission configuration skip it): a name without '/' must be a standard one."""
    return [
        field.invalid(
            f"{path}[{i}]",
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        )
        for i, name in enumerate(finalizers)
        if "/" not in name and name not in STANDARD_FINALIZERS
    ]


def _namespace(meta: dict[str, Any], namespaced: bool) -> list[FieldError]:
    namespace = meta.get("namespace", "")
    if not namespaced:
        return (
            [field.forbidden("metadata.namespace", "not allowed on this type")] if namespace else []
        )
    if not namespace:
        return [field.required("metadata.namespace")]
    return [field.invalid("metadata.namespace", namespace, m) for m in is_dns1123_label(namespace)]


def _content(meta: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    generation = meta.get("generation", 0)
    if generation < 0:
        errs.append(
            field.invalid("metadata.generation", generation, "must be greater than or equal to 0")
        )
    errs += validate_labels(meta.get("labels") or {}, "metadata.labels")
    errs += validate_annotations(meta.get("annotations") or {}, "metadata.annotations")
    errs += validate_owner_references(meta.get("ownerReferences") or [], "metadata.ownerReferences")
    return errs


def validate_object_meta(meta: dict[str, Any], namespaced: bool, rule: str) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create."""
    errs: list[FieldError] = []
    generate_name = meta.get("generateName", "")
    if generate_name and rule != "long-name":  # kube's ValidateObjectMetaWithOpts: none
        errs += [
            field.invalid("metadata.generateName", generate_name, m)
            for m in validate_name(rule, generate_name, prefix=True)
        ]
    name = meta.get("name", "")
    if not name:
        errs.append(field.required("metadata.name", "name or generateName is required"))
    else:
        errs += [field.invalid("metadata.name", name, m) for m in validate_name(rule, name)]
    errs += _namespace(meta, namespaced)
    errs += _content(meta)
    errs += validate_finalizers(meta.get("finalizers") or [], "metadata.finalizers")
    return errs


_IMMUTABLE = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def validate_object_meta_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: identity fields are immutable."""
    errs: list[FieldError] = []
    if old.get("deletionTimestamp"):
        added = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
        if added:
            shown = "[]string{" + ", ".join(f'"{f}"' for f in added) + "}"
            errs.append(
                field.forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {shown}",
                )
            )
    if not new.get("resourceVersion"):
        errs.append(
            field.invalid("metadata.resourceVersion", "", "must be specified for an update")
        )
    if new.get("generation", 0) < old.get("generation", 0):
        errs.append(
            field.invalid(
                "metadata.generation", new.get("generation", 0), "must not be decremented"
            )
        )
    for key in _IMMUTABLE:
        if new.get(key) != old.get(key):
            errs.append(field.invalid(f"metadata.{key}", new.get(key), "field is immutable"))
    errs += _content(new)
    return errs


def validate_core_meta_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Core's ``ValidateObjectMetaUpdate``: apimachinery's update checks, then core's
    finalizer rules (built-in kinds' status writes check their metadata so)."""
    errs = validate_object_meta_update(new, old)
    return errs + validate_kube_finalizers(new.get("finalizers") or [], "metadata.finalizers")
