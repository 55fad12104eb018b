"""Validation shared by pods and pod templates: the rules every workload relies on."""

from __future__ import annotations

from typing import Any

from platform_api.quantity import canonical, parse_quantity
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label

Obj = dict[str, Any]
RESTART_POLICIES = ["Always", "OnFailure", "Never"]  # kube lists them in this order
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]


def validate_pod_spec(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = spec.get("containers") or []
    if not containers:
        errs.append(field.required(f"{path}.containers"))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key) or []):
            at = f"{path}.{key}[{i}]"
            name = container.get("name", "")
            if not name:
                errs.append(field.required(f"{at}.name"))
            else:
                errs += [field.invalid(f"{at}.name", name, m) for m in is_dns1123_label(name)]
                if name in seen:
                    errs.append(field.duplicate(f"{at}.name", name))
                seen.add(name)
            if not container.get("image"):
                errs.append(field.required(f"{at}.image"))
            errs += _container(container, at)
    restart = spec.get("restartPolicy")
    if restart is not None and restart not in RESTART_POLICIES:
        errs.append(field.not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    return errs


def _container(container: Obj, at: str) -> list[FieldError]:
    """kube's per-container rules for ports, env, pull policy and resources."""
    errs: list[FieldError] = []
    for i, port in enumerate(container.get("ports") or []):
        number = port.get("containerPort") or 0
        where = f"{at}.ports[{i}].containerPort"
        if not number:
            errs.append(field.required(where))
        elif not 1 <= number <= 65535:
            errs.append(field.invalid(where, number, "must be between 1 and 65535, inclusive"))
    for i, env in enumerate(container.get("env") or []):
        if not env.get("name"):
            errs.append(field.required(f"{at}.env[{i}].name"))
    pull = container.get("imagePullPolicy")
    if pull is not None and pull not in PULL_POLICIES:
        errs.append(field.not_supported(f"{at}.imagePullPolicy", pull, PULL_POLICIES))
    return errs + _requests_within_limits(container.get("resources") or {}, f"{at}.resources")


def _requests_within_limits(resources: Obj, at: str) -> list[FieldError]:
    limits = resources.get("limits") or {}
    errs: list[FieldError] = []
    for name, request in (resources.get("requests") or {}).items():
        if name not in limits:
            continue
        try:
            over = parse_quantity(str(request)) > parse_quantity(str(limits[name]))
        except ValueError:
            continue  # the schema decoder refused malformed quantities already
        if over:  # both as kube prints a Quantity
            detail = f"must be less than or equal to {name} limit of {canonical(str(limits[name]))}"
            errs.append(field.invalid(f"{at}.requests", canonical(str(request)), detail))
    return errs


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against a label set; an absent or
    empty selector, or one that does not convert, matches nothing (PDBs, workloads)."""
    if not selector:
        return False
    try:
        return label_selector_from(selector).matches(labels)
    except SelectorError:
        return False
