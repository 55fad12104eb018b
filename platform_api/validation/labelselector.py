"""Validation of a ``metav1.LabelSelector`` (matchLabels, matchExpressions).

kube's ``ValidateLabelSelector``: keys are qualified names, matchLabels values are
label values, ``In``/``NotIn`` need values and ``Exists``/``DoesNotExist`` take none.
Requirement values must be label values too, unless ``allow_invalid_values`` (kube's
``AllowInvalidLabelValueInSelector``, set on updates of objects already holding one).
"""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_label_value, is_qualified_name


def validate_label_selector(
    selector: Any, path: str, allow_invalid_values: bool = False
) -> list[FieldError]:
    if not isinstance(selector, dict):
        return []
    errs: list[FieldError] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        errs += [field.invalid(f"{path}.matchLabels", key, m) for m in is_qualified_name(key)]
        errs += [field.invalid(f"{path}.matchLabels", value, m) for m in is_label_value(value)]
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        errs += validate_label_requirement(
            expr, f"{path}.matchExpressions[{i}]", allow_invalid_values
        )
    return errs


def validate_label_requirement(
    expr: dict[str, Any],
    path: str,
    allow_invalid_values: bool = False,
    allow_unknown_operator: bool = False,
) -> list[FieldError]:
    """kube's ``ValidateLabelSelectorRequirement``; ``allow_unknown_operator`` for the
    access reviews of newer clients (kube's ``AllowUnknownOperatorInRequirement``)."""
    errs: list[FieldError] = []
    op, values = expr.get("operator", ""), expr.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                field.required(
                    f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                field.forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif not allow_unknown_operator:
        errs.append(
            field.invalid(f"{path}.operator", field.named(op), "not a valid selector operator")
        )
    key = expr.get("key", "")
    errs += [field.invalid(f"{path}.key", key, m) for m in is_qualified_name(key)]
    if not allow_invalid_values:
        for i, value in enumerate(values):
            errs += [field.invalid(f"{path}.values[{i}]", value, m) for m in is_label_value(value)]
    return errs
