"""Validation of ``metav1.Condition`` lists, as apimachinery's ``ValidateConditions``.

Status writers (controllers, or users through ``/status``) of kinds whose status holds
standard conditions get the same checks kube applies: unique qualified types, a known
status, a transition time, a well-formed reason and bounded texts.
"""

from __future__ import annotations

import re
from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_qualified_name, regex_error

STATUSES = ["False", "True", "Unknown"]
MAX_REASON = 1024
MAX_MESSAGE = 32 * 1024
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(f"^{_REASON_FMT}\\Z")
_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a "
    "string of alphanumeric characters or '_,:', and must end with an alphanumeric "
    "character or '_'"
)
_REASON_EXAMPLES = ("my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")


def validate_conditions(conditions: Any, path: str) -> list[FieldError]:
    """Every condition, and no condition type twice."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    items = conditions if isinstance(conditions, list) else []
    for i, condition in enumerate(c if isinstance(c, dict) else {} for c in items):
        kind = condition.get("type") or ""
        if kind in seen:
            errs.append(field.duplicate(f"{path}[{i}].type", kind))
        seen.add(kind)
        errs += validate_condition(condition, f"{path}[{i}]")
    return errs


def validate_condition(condition: dict[str, Any], path: str) -> list[FieldError]:
    kind = condition.get("type") or ""
    errs = [field.invalid(f"{path}.type", kind, m) for m in is_qualified_name(kind)]
    status = condition.get("status") or ""
    if status not in STATUSES:
        errs.append(field.not_supported(f"{path}.status", status, STATUSES))
    observed = condition.get("observedGeneration") or 0
    if isinstance(observed, int) and observed < 0:
        errs.append(
            field.invalid(
                f"{path}.observedGeneration", observed, "must be greater than or equal to zero"
            )
        )
    if not condition.get("lastTransitionTime"):
        errs.append(field.required(f"{path}.lastTransitionTime"))
    reason = condition.get("reason") or ""
    if not reason:
        errs.append(field.required(f"{path}.reason"))
    else:
        if not _REASON_RE.match(reason):
            message = regex_error(_REASON_MSG, _REASON_FMT, *_REASON_EXAMPLES)
            errs.append(field.invalid(f"{path}.reason", reason, message))
        if len(reason) > MAX_REASON:
            errs.append(field.too_long(f"{path}.reason", MAX_REASON))
    if len(condition.get("message") or "") > MAX_MESSAGE:
        errs.append(field.too_long(f"{path}.message", MAX_MESSAGE))
    return errs
