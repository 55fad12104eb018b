"""Validation shared by pods and pod templates: the rules every workload relies on."""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label

Obj = dict[str, Any]


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
    return errs


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against a label set."""
    if not selector:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        present = key in labels
        if (op == "In" and (not present or labels[key] not in values)) or (
            op == "NotIn" and present and labels[key] in values
        ):
            return False
        if (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True
