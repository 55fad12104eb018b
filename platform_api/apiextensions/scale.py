"""The scale sub-resource of custom resources: replicas and selector at the CRD's paths.

``specReplicasPath``, ``statusReplicasPath`` and ``labelSelectorPath`` name where an
autoscaling/v1 Scale view reads and writes.  Objects are checked as kube's validator
checks them (non-negative int32 replicas, a string selector), with its texts.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.gotext import go_type, sprint
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
_MAX_INT32 = 2**31 - 1


def _parts(path: str) -> list[str]:
    return path.removeprefix(".").split(".")


def nested(obj: Obj, path: str, kind: type, go_name: str) -> tuple[Any, bool, str]:
    """kube's ``unstructured.Nested*``: (value, found, accessor error text).  A step
    through something that is neither an object nor null is an error too, named by the
    path up to that step (``.spec.replicas`` when ``spec`` is a string)."""
    value: Any = obj
    parts = _parts(path)
    for i, part in enumerate(parts):
        if value is None:
            return None, False, ""
        if not isinstance(value, dict):
            return None, False, _accessor(parts[: i + 1], value, "map[string]interface{}")
        if part not in value:
            return None, False, ""
        value = value[part]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        return None, True, _accessor(parts, value, go_name)
    return value, True, ""


def _accessor(parts: list[str], value: Any, expected: str) -> str:
    at = "." + ".".join(parts)
    return (
        f"{at} accessor error: {sprint(value)} is of the type "
        f"{'<nil>' if value is None else go_type(value)}, expected {expected}"
    )


def _replicas_errors(obj: Obj, path: str) -> list[FieldError]:
    value, _, problem = nested(obj, path, int, "int64")
    if problem:
        return [field.invalid(path, 0, problem)]
    if value is None:
        return []
    if value < 0:
        return [field.invalid(path, value, "should be a non-negative integer")]
    if value > _MAX_INT32:
        return [field.invalid(path, value, f"should be less than or equal to {_MAX_INT32}")]
    return []


def scale_errors(obj: Obj, scale: Obj | None, spec: bool = True) -> list[FieldError]:
    """kube's ValidateScaleSpec (``spec``) and ValidateScaleStatus."""
    if scale is None:
        return []
    errs = _replicas_errors(obj, scale["specReplicasPath"]) if spec else []
    errs += _replicas_errors(obj, scale["statusReplicasPath"])
    selector_path = scale.get("labelSelectorPath")
    if selector_path:
        _, _, problem = nested(obj, selector_path, str, "string")
        if problem:
            errs.append(field.invalid(selector_path, "", problem))
    return errs


def to_scale(obj: Obj, scale: Obj) -> Obj:
    """The autoscaling/v1 Scale view of a custom resource (kube's scaleFromCustomResource)."""
    spec, found, problem = nested(obj, scale["specReplicasPath"], int, "int64")
    status, _, status_problem = nested(obj, scale["statusReplicasPath"], int, "int64")
    if problem or status_problem:
        raise errors.internal_error(problem or status_problem)
    selector = ""
    if scale.get("labelSelectorPath"):
        selector, _, _ = nested(obj, scale["labelSelectorPath"], str, "string")
    meta = obj.get("metadata", {})
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec if found else 0},
        # Scale's status.selector is omitempty: absent when the path holds nothing
        "status": {"replicas": status or 0, **({"selector": selector} if selector else {})},
    }


def set_replicas(obj: Obj, scale: Obj, replicas: int) -> None:
    """Write a Scale's replicas back to the object's spec path."""
    *parents, last = _parts(scale["specReplicasPath"])
    node = obj
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = replicas
