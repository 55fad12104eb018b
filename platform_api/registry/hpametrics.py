"""An autoscaler's metrics and the objects it names, as kube's validateMetrics and
ValidateCrossVersionObjectReference check them (autoscaling/v2, the stored form).

Each metric names one source of its type: the first source present is checked, the
type's own must be there, any other is forbidden.  kube reports an unknown type twice
(once as not supported, once more from its switch) and an empty one three times; so
does this module, in kube's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.registry.limitrange import container_resource_name
from platform_api.registry.strategy import Obj
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label, is_path_segment_name

METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
# kube's order of looking for a source, and the source each type names.
SOURCES = ("object", "external", "pods", "resource", "containerResource")
EXPECTED = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}
POPULATE = "must populate information for the given metric source"
ONE_SOURCE = "must populate the given metric source only"
RAW_OR_UTILIZATION = "must set either a target raw value or a target utilization"
NOT_BOTH = "may not set both a target raw value and a target utilization"


@dataclass(frozen=True)
class RefOptions:
    """kube's CrossVersionObjectReferenceValidationOptions."""

    allow_empty_group: bool = False
    allow_invalid_version: bool = False


DESCRIBED = RefOptions(allow_empty_group=True)  # an Object metric's describedObject


def validate_metrics(
    metrics: list[Any], at: str, min_replicas: Any, described: RefOptions = DESCRIBED
) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, metric in enumerate(metrics):
        errs += _metric(metric if isinstance(metric, dict) else {}, f"{at}[{i}]", described)
    types = {m.get("type") for m in metrics if isinstance(m, dict)}
    if min_replicas == 0 and not types & {"Object", "External"}:
        detail = "must specify at least one Object or External metric to support scaling to zero replicas"
        errs.append(field.forbidden(at, detail))
    return errs


def _metric(metric: Obj, at: str, described: RefOptions) -> list[FieldError]:
    kind = metric.get("type") or ""
    errs: list[FieldError] = []
    if not kind:
        errs.append(field.required(f"{at}.type", "must specify a metric source type"))
    if kind not in METRIC_TYPES:
        errs.append(field.not_supported(f"{at}.type", kind, METRIC_TYPES))
    present = [key for key in SOURCES if metric.get(key) is not None]
    if present:
        first = present[0]
        source = metric[first] if isinstance(metric[first], dict) else {}
        errs += _source(first, source, f"{at}.{first}", described)
    expected = EXPECTED.get(kind)
    if expected is None:
        errs.append(field.not_supported(f"{at}.type", kind, METRIC_TYPES))
    elif metric.get(expected) is None:
        errs.append(field.required(f"{at}.{expected}", POPULATE))
    if len(present) != 1:  # kube walks a set here: its order is Go's map order
        errs += [
            field.forbidden(f"{at}.{key}", ONE_SOURCE) for key in sorted(present) if key != expected
        ]
    return errs


def _source(key: str, source: Obj, at: str, described: RefOptions) -> list[FieldError]:
    target = source.get("target") if isinstance(source.get("target"), dict) else {}
    assert isinstance(target, dict)
    value, average = target.get("value"), target.get("averageValue")
    errs: list[FieldError] = []
    if key == "object":
        ref = source.get("describedObject") or {}
        errs += validate_object_reference(ref, f"{at}.describedObject", described)
    if key in ("object", "external", "pods"):
        errs += _identifier(source.get("metric") or {}, f"{at}.metric")
    else:
        errs += _resource_name(key, source, at)
    errs += _target(target, f"{at}.target")
    where = f"{at}.target.averageValue"
    if key == "object" and value is None and average is None:
        errs.append(field.required(where, "must set either a target value or averageValue"))
    elif key == "external":
        if value is None and average is None:
            detail = "must set either a target value for metric or a per-pod target"
            errs.append(field.required(where, detail))
        if value is not None and average is not None:
            detail = "may not set both a target value for metric and a per-pod target"
            errs.append(field.forbidden(f"{at}.target.value", detail))
    elif key == "pods" and average is None:
        errs.append(field.required(where, "must specify a positive target averageValue"))
    elif key in ("resource", "containerResource"):
        utilization = target.get("averageUtilization")
        if utilization is None and average is None:
            errs.append(field.required(f"{at}.target.averageUtilization", RAW_OR_UTILIZATION))
        if utilization is not None and average is not None:
            errs.append(field.forbidden(where, NOT_BOTH))
    return errs


def _resource_name(key: str, source: Obj, at: str) -> list[FieldError]:
    name = source.get("name") or ""
    errs: list[FieldError] = []
    if not name:
        errs.append(field.required(f"{at}.name", "must specify a resource name"))
    elif key == "containerResource":
        errs += container_resource_name(name, f"{at}.name")
    if key == "containerResource":
        container = source.get("container") or ""
        if not container:
            errs.append(field.required(f"{at}.container", "must specify a container"))
        else:
            errs += field.each(f"{at}.container", container, is_dns1123_label)
    return errs


def _identifier(metric: Obj, at: str) -> list[FieldError]:
    name = metric.get("name") or ""
    if not name:
        return [field.required(f"{at}.name", "must specify a metric name")]
    return field.each(f"{at}.name", name, is_path_segment_name)


def _target(target: Obj, at: str) -> list[FieldError]:
    kind = target.get("type") or ""
    errs: list[FieldError] = []
    if not kind:
        errs.append(field.required(f"{at}.type", "must specify a metric target type"))
    if kind not in TARGET_TYPES:
        detail = "must be either Utilization, Value, or AverageValue"
        errs.append(field.invalid(f"{at}.type", field.named(kind), detail))
    for key in ("value", "averageValue"):
        quantity = _quantity(target.get(key))
        if quantity is not None and quantity.value <= 0:
            errs.append(field.invalid(f"{at}.{key}", str(quantity), "must be positive"))
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        errs.append(
            field.invalid(f"{at}.averageUtilization", utilization, "must be greater than 0")
        )
    return errs


def _quantity(value: Any) -> Any:
    try:
        return None if value is None else parse(str(value))
    except QuantityError:
        return None  # the decoder refuses what is no quantity


def validate_object_reference(ref: Obj, at: str, opts: RefOptions) -> list[FieldError]:
    """kube's ValidateCrossVersionObjectReference: a kind and a name that are path
    segments, and an apiVersion that parses and (unless allowed) names a group."""
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        errs += field.checked(f"{at}.{key}", ref.get(key) or "", is_path_segment_name)
    version = ref.get("apiVersion") or ""
    why = "" if opts.allow_invalid_version else api_version_problem(version, opts)
    if why:
        errs.append(field.invalid(f"{at}.apiVersion", version, why))
    return errs


def api_version_problem(version: str, opts: RefOptions) -> str:
    """kube's ValidateAPIVersion (schema.ParseGroupVersion, then the group)."""
    if version in ("", "/"):
        group = ""
    elif version.count("/") > 1:
        return f"unexpected GroupVersion string: {version}"
    else:
        group = version.split("/", 1)[0] if "/" in version else ""
    if not opts.allow_empty_group and not group:
        return "apiVersion must specify API group"
    return ""
