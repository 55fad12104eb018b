"""LimitRange: kube's ValidateLimitRange, and the resource-name rules it shares with pods.

Each limit's type must be Pod, Container, PersistentVolumeClaim or a qualified name, at most
once; its resource names must be standard (or qualified, extended for containers); and
its quantities must agree: min <= defaultRequest <= default <= max, a ratio of at least
one and within max/min, and no overcommit of resources that allow none.
"""

from __future__ import annotations

from typing import Any

from platform_api.quantity import MAX_MILLI_VALUE, Quantity, QuantityError, parse
from platform_api.registry.defaults import defaults
from platform_api.registry.quota_validation import (
    HUGEPAGES_PREFIX,
    REQUESTS_PREFIX,
    is_native,
)
from platform_api.registry.quota_validation import is_extended as is_extended_resource_name
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.uid import new_uid
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_qualified_name

LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
STANDARD_RESOURCES = frozenset(
    (
        *CONTAINER_RESOURCES,
        *(f"{p}.{r}" for p in ("requests", "limits") for r in CONTAINER_RESOURCES),
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    )
)


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def overcommit_allowed(name: str) -> bool:
    """kube's IsOvercommitAllowed: a native resource but huge pages, which a request
    may set below its limit; any other's request must equal its limit."""
    return is_native(name) and not is_hugepages(name)


def resource_name(name: str, path: str) -> list[FieldError]:
    """kube's validateResourceName: a qualified name, standard unless it has a domain."""
    errs = [field.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    standard = name in STANDARD_RESOURCES or is_hugepages(name.removeprefix(REQUESTS_PREFIX))
    if "/" not in name and not standard:
        return [field.invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def container_resource_name(name: str, path: str) -> list[FieldError]:
    """kube's validateContainerResourceName."""
    errs = resource_name(name, path)
    if "/" not in name:
        if name not in CONTAINER_RESOURCES and not is_hugepages(name):
            errs.append(field.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended_resource_name(name):
        errs.append(field.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _type_name(value: str, path: str) -> list[FieldError]:
    errs = [field.invalid(path, value, msg) for msg in is_qualified_name(value)]
    if not errs and "/" not in value and value not in LIMIT_TYPES:
        errs.append(field.invalid(path, value, "must be a standard limit type or fully qualified"))
    return errs


def _section(limit: Obj, key: str, at: str) -> tuple[dict[str, Quantity], list[FieldError]]:
    """A limit's quantities under ``key``, and the errors of their names."""
    kind = limit.get("type", "")
    check = container_resource_name if kind in ("Pod", "Container") else resource_name
    out: dict[str, Quantity] = {}
    errs: list[FieldError] = []
    for name, text in sorted((limit.get(key) or {}).items()):
        errs += check(name, f"{at}.{key}[{name}]")
        try:
            out[name] = parse(str(text))
        except QuantityError:
            continue  # the decoder refuses what does not parse
    return out, errs


def _bounds(at: str, name: str, q: dict[str, dict[str, Quantity]]) -> list[FieldError]:
    """The agreement of one resource's min, max, defaults and ratio."""
    lo, hi = q["min"].get(name), q["max"].get(name)
    default, request = q["default"].get(name), q["defaultRequest"].get(name)
    ratio = q["maxLimitRequestRatio"].get(name)

    def bad(key: str, value: Quantity, detail: str) -> FieldError:
        return field.invalid(f"{at}.{key}[{name}]", str(value), detail)

    def over(a: Quantity | None, b: Quantity | None) -> bool:
        return a is not None and b is not None and a.value > b.value

    checks: list[tuple[bool, str, Quantity | None, str]] = [
        (over(lo, hi), "min", lo, f"min value {lo} is greater than max value {hi}"),
        (
            over(lo, request),
            "defaultRequest",
            request,
            f"min value {lo} is greater than default request value {request}",
        ),
        (
            over(request, hi),
            "defaultRequest",
            request,
            f"default request value {request} is greater than max value {hi}",
        ),
        (
            over(request, default),
            "defaultRequest",
            request,
            f"default request value {request} is greater than default limit value {default}",
        ),
        (
            over(lo, default),
            "default",
            lo,
            f"min value {lo} is greater than default value {default}",
        ),
        (
            over(default, hi),
            "default",
            hi,
            f"default value {default} is greater than max value {hi}",
        ),
        (
            ratio is not None and ratio.value < 1,
            "maxLimitRequestRatio",
            ratio,
            f"ratio {ratio} is less than 1",
        ),
    ]
    errs = [bad(key, value, detail) for failed, key, value, detail in checks if failed and value]
    if ratio and lo and hi:
        errs += _ratio_within(bad, ratio, lo, hi)
    if not overcommit_allowed(name) and default and request and default.value != request.value:
        why = f"default value {default} must equal to defaultRequest value {request} in {name}"
        errs.append(bad("defaultRequest", request, why))
    return errs


def _ratio_within(bad: Any, ratio: Quantity, lo: Quantity, hi: Quantity) -> list[FieldError]:
    allowed, low, high = float(ratio.int_value()), lo.int_value(), hi.int_value()
    if max(ratio.int_value(), low, high) < MAX_MILLI_VALUE:
        allowed, low, high = ratio.milli_value() / 1000, lo.milli_value(), hi.milli_value()
    limit = high / low if low else float("inf")
    if allowed > limit:
        return [
            bad("maxLimitRequestRatio", ratio, f"ratio {ratio} is greater than max/min = {limit:f}")
        ]
    return []


def validate_limit_range(obj: Obj) -> list[FieldError]:
    """kube's ValidateLimitRange, without ObjectMeta (the generic strategy checks it)."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, limit in enumerate((obj.get("spec") or {}).get("limits") or []):
        at = f"spec.limits[{i}]"
        kind = limit.get("type", "")
        errs += _type_name(kind, f"{at}.type")
        if kind in seen:
            errs.append(field.duplicate(f"{at}.type", kind))
        seen.add(kind)
        sections: dict[str, dict[str, Quantity]] = {"default": {}, "defaultRequest": {}}
        for key in ("max", "min", "default", "defaultRequest"):
            if kind == "Pod" and key.startswith("default"):
                if limit.get(key):
                    why = "may not be specified when `type` is 'Pod'"
                    errs.append(field.forbidden(f"{at}.{key}", why))
                continue
            sections[key], name_errs = _section(limit, key, at)
            errs += name_errs
        if kind == "PersistentVolumeClaim" and not (
            "storage" in (limit.get("min") or {}) or "storage" in (limit.get("max") or {})
        ):
            errs.append(
                field.required(
                    f"{at}.limits",
                    "either minimum or maximum storage value is required, but neither was provided",
                )
            )
        sections["maxLimitRequestRatio"], name_errs = _section(limit, "maxLimitRequestRatio", at)
        errs += name_errs
        for name in sorted(set().union(*sections.values())):
            errs += _bounds(at, name, sections)
    return errs


@defaults("", "LimitRange")
def default_limit_range(obj: Obj) -> None:
    """kube's SetDefaults_LimitRangeItem, for Container limits only: a default limit
    from the max, then a default request from the default limit, then from the min."""
    for limit in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(limit, dict) or limit.get("type") != "Container":
            continue
        default = dict(limit.get("default") or {})
        request = dict(limit.get("defaultRequest") or {})
        for source, target in (("max", default), ("default", request), ("min", request)):
            values = default if source == "default" else limit.get(source) or {}
            for name, value in values.items():
                target.setdefault(name, value)
        for key, values in (("default", default), ("defaultRequest", request)):
            if values:  # Go writes a map's keys in order
                limit[key] = dict(sorted(values.items()))
        if "maxLimitRequestRatio" in limit:  # after the defaults, as kube's struct has it
            limit["maxLimitRequestRatio"] = limit.pop("maxLimitRequestRatio")


@register("", "LimitRange")
class LimitRangeStrategy(GenericStrategy):
    update_meta_checks = "C"
    allow_create_on_update = True

    def prepare_for_create(self, obj: Obj) -> None:
        """kube's strategy names a LimitRange with neither a name nor a ``generateName``
        with a UUID."""
        super().prepare_for_create(obj)
        meta = obj["metadata"]
        if not meta.get("name"):
            meta["name"] = new_uid()

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_limit_range(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + validate_limit_range(new)
