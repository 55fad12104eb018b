"""Validation shared by pods and pod templates: the rules every workload relies on."""

from __future__ import annotations

from typing import Any

from platform_api.selectors import SelectorError, label_selector_from
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
    """A LabelSelector (matchLabels, matchExpressions) against a label set; an absent or
    empty selector, or one that does not convert, matches nothing (PDBs, workloads)."""
    if not selector:
        return False
    try:
        return label_selector_from(selector).matches(labels)
    except SelectorError:
        return False
