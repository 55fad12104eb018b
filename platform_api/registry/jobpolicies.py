"""A Job's policies as kube's validateJobSpec checks them: the pod failure policy's rules,
the success policy's rules, the pod replacement policy and ``managedBy``.

A failure rule has an action and exactly one of exit codes (an operator, ordered
distinct values, a container of the template) or pod condition patterns (a qualified
type and a status); FailIndex needs a per-index backoff limit.  A success rule counts
successes, names indexes (kube's interval syntax, below completions), or both, never
more than it could see.  With a failure policy only Failed pods are replaced.
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.jobstatusvalidation import index_total
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import domain_prefixed_path, is_qualified_name

Obj = dict[str, Any]
ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
OPERATORS = ["In", "NotIn"]
STATUSES = ["False", "True", "Unknown"]
REPLACEMENT = ["Failed", "TerminatingOrFailed"]
MAX_RULES = 20
MAX_EXIT_CODES = 255
MAX_CONDITION_PATTERNS = 20
MAX_SUCCESS_RULES = 20
MAX_SUCCEEDED_INDEXES = 64 * 1024
MAX_MANAGED_BY = 63


def _valid_values(values: list[str]) -> str:
    """Go's ``%q`` of a string slice: ``["a" "b"]``."""
    return "valid values: [" + " ".join(f'"{v}"' for v in values) + "]"


def validate_managed_by(value: Any, at: str) -> list[FieldError]:
    """IsDomainPrefixedPath, then the length limit."""
    if value is None:
        return []
    errs = domain_prefixed_path(str(value), at)
    if len(str(value)) > MAX_MANAGED_BY:
        errs.append(field.too_long(at, MAX_MANAGED_BY))
    return errs


def validate_pod_failure_policy(spec: Obj, at: str) -> list[FieldError]:
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return []
    rules = policy.get("rules") or []
    errs: list[FieldError] = []
    if len(rules) > MAX_RULES:
        errs.append(field.too_many(f"{at}.rules", len(rules), MAX_RULES))
    pod = (spec.get("template") or {}).get("spec") or {}
    names = {
        c.get("name")
        for c in (pod.get("containers") or []) + (pod.get("initContainers") or [])
        if isinstance(c, dict)
    }
    for i, rule in enumerate(rules):
        errs += _failure_rule(spec, rule or {}, f"{at}.rules[{i}]", names)
    return errs


def _failure_rule(spec: Obj, rule: Obj, at: str, names: set[Any]) -> list[FieldError]:
    action = rule.get("action") or ""
    errs: list[FieldError] = []
    if not action:
        errs.append(field.required(f"{at}.action", _valid_values(ACTIONS)))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            detail = "requires the backoffLimitPerIndex to be set"
            errs.append(field.invalid(f"{at}.action", action, detail))
    elif action not in ACTIONS:
        errs.append(field.not_supported(f"{at}.action", action, ACTIONS))
    codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
    if codes is not None:
        errs += _exit_codes(codes, f"{at}.onExitCodes", names)
    if conditions:
        errs += _condition_patterns(conditions, f"{at}.onPodConditions")
    if codes is not None and conditions:
        detail = "specifying both OnExitCodes and OnPodConditions is not supported"
        errs.append(field.invalid(at, field.OMIT, detail))
    if codes is None and not conditions:
        detail = "specifying one of OnExitCodes and OnPodConditions is required"
        errs.append(field.invalid(at, field.OMIT, detail))
    return errs


def _condition_patterns(patterns: list[Any], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        errs.append(field.too_many(at, len(patterns), MAX_CONDITION_PATTERNS))
    for j, given in enumerate(patterns):
        pattern = given or {}
        kind, status = str(pattern.get("type") or ""), pattern.get("status") or ""
        errs += [field.invalid(f"{at}[{j}].type", kind, m) for m in is_qualified_name(kind)]
        if not status:
            errs.append(field.required(f"{at}[{j}].status", _valid_values(STATUSES)))
        elif status not in STATUSES:
            errs.append(field.not_supported(f"{at}[{j}].status", status, STATUSES))
    return errs


def _exit_codes(codes: Obj, at: str, names: set[Any]) -> list[FieldError]:
    operator, values = codes.get("operator") or "", codes.get("values")
    errs: list[FieldError] = []
    if not operator:
        errs.append(field.required(f"{at}.operator", _valid_values(OPERATORS)))
    elif operator not in OPERATORS:
        errs.append(field.not_supported(f"{at}.operator", operator, OPERATORS))
    container = codes.get("containerName")
    if container is not None and container not in names:
        detail = "must be one of the container or initContainer names in the pod template"
        errs.append(field.invalid(f"{at}.containerName", container, detail))
    if not values:
        errs.append(field.invalid(f"{at}.values", values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODES:
        errs.append(field.too_many(f"{at}.values", len(values), MAX_EXIT_CODES))
    seen: set[Any] = set()
    for j, value in enumerate(values or []):
        if operator == "In" and value == 0:
            errs.append(
                field.invalid(f"{at}.values[{j}]", value, "must not be 0 for the In operator")
            )
        if value in seen:
            errs.append(field.duplicate(f"{at}.values[{j}]", value))
        seen.add(value)
    if any(a > b for a, b in zip(values or [], (values or [])[1:], strict=False)):
        errs.append(field.invalid(f"{at}.values", values, "must be ordered"))
    return errs


def validate_success_policy(spec: Obj, at: str) -> list[FieldError]:
    """The rules of an Indexed Job's success policy (the mode is checked by the caller)."""
    rules = (spec.get("successPolicy") or {}).get("rules") or []
    errs: list[FieldError] = []
    if not rules:
        detail = "at least one rules must be specified when the successPolicy is specified"
        errs.append(field.required(f"{at}.rules", detail))
    if len(rules) > MAX_SUCCESS_RULES:
        errs.append(field.too_many(f"{at}.rules", len(rules), MAX_SUCCESS_RULES))
    completions = spec.get("completions") or 0
    for i, rule in enumerate(rules):
        errs += _success_rule(rule or {}, f"{at}.rules[{i}]", completions)
    return errs


def _success_rule(rule: Obj, at: str, completions: int) -> list[FieldError]:
    indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
    errs: list[FieldError] = []
    if indexes is None and count is None:
        detail = "at least one of succeededCount or succeededIndexes must be specified"
        errs.append(field.required(at, detail))
    total = 0
    if indexes is not None:
        where = f"{at}.succeededIndexes"
        if len(indexes) > MAX_SUCCEEDED_INDEXES:
            errs.append(field.too_long(where, MAX_SUCCEEDED_INDEXES))
        problem, total = index_total(indexes, completions)
        if problem:
            detail = f"error parsing succeededIndexes: {problem}"
            errs.append(field.invalid(where, indexes, detail))
    if count is not None:
        where = f"{at}.succeededCount"
        errs += field.nonnegative(where, count)
        if count > completions:
            detail = (
                f"must be less than or equal to {completions} (the number of specified completions)"
            )
            errs.append(field.invalid(where, count, detail))
        if indexes is not None and count > total:
            detail = (
                f"must be less than or equal to {total} (the number of indexes in the "
                "specified succeededIndexes field)"
            )
            errs.append(field.invalid(where, count, detail))
    return errs


def validate_pod_replacement_policy(spec: Obj, at: str) -> list[FieldError]:
    policy = spec.get("podReplacementPolicy")
    if policy is None:
        return []
    allowed = ["Failed"] if spec.get("podFailurePolicy") is not None else REPLACEMENT
    return [] if policy in allowed else [field.not_supported(at, policy, allowed)]
