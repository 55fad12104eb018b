"""The counting rules of kube's ``validateJobSpec``: indexed completions and
parallelism, the per-index backoff limit and maxFailedIndexes, and what needs the
Indexed mode."""

from __future__ import annotations

from typing import Any

from platform_api.gotext import json_string
from platform_api.registry.jobpolicies import validate_success_policy
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText

Obj = dict[str, Any]
MAX_INDEXED_PARALLELISM = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
HIGH_COMPLETIONS_PARALLELISM = 10_000
HIGH_COMPLETIONS_FAILED_INDEXES = 10_000


def validate_job_counts(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    per_index, most_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    if isinstance(most_failed, int) and per_index is None:
        errs.append(
            field.required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified")
        )
    if spec.get("completionMode") == "Indexed":
        errs += _indexed(spec, path)
    elif spec.get("completionMode") in (None, "NonIndexed"):
        for name, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", most_failed)):
            if isinstance(value, int):
                errs.append(
                    field.invalid(f"{path}.{name}", value, "requires indexed completion mode")
                )
    return errs


def validate_success_policy_mode(spec: Obj, path: str) -> list[FieldError]:
    """A success policy needs Indexed completions; then its rules are checked."""
    if spec.get("successPolicy") is None:
        return []
    if spec.get("completionMode") != "Indexed":
        policy = _go_success_policy(spec["successPolicy"])
        return [field.invalid(f"{path}.successPolicy", policy, "requires indexed completion mode")]
    return validate_success_policy(spec, f"{path}.successPolicy")


def _go_success_policy(policy: Any) -> GoText:
    """The policy as kube prints its internal struct (Go field names, nulls kept)."""
    rules = policy.get("rules") if isinstance(policy, dict) else None
    if rules is None:
        return GoText('{"Rules":null}')
    parts = []
    for rule in rules:
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        shown = "null" if indexes is None else json_string(str(indexes))
        counted = "null" if count is None else str(count)
        parts.append(f'{{"SucceededIndexes":{shown},"SucceededCount":{counted}}}')
    return GoText('{"Rules":[' + ",".join(parts) + "]}")


def _indexed(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    most_failed = spec.get("maxFailedIndexes")
    if completions is None:
        errs.append(field.required(f"{path}.completions", "when completion mode is Indexed"))
    if isinstance(parallelism, int) and parallelism > MAX_INDEXED_PARALLELISM:
        detail = f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed"
        errs.append(field.invalid(f"{path}.parallelism", parallelism, detail))
    if isinstance(most_failed, int):
        if isinstance(completions, int) and most_failed > completions:
            errs.append(
                field.invalid(
                    f"{path}.maxFailedIndexes",
                    most_failed,
                    "must be less than or equal to completions",
                )
            )
        if most_failed > MAX_FAILED_INDEXES:
            detail = f"must be less than or equal to {MAX_FAILED_INDEXES}"
            errs.append(field.invalid(f"{path}.maxFailedIndexes", most_failed, detail))
    high = isinstance(completions, int) and completions > COMPLETIONS_SOFT_LIMIT
    if high and spec.get("backoffLimitPerIndex") is not None:
        tail = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        if most_failed is None:
            detail = f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
            errs.append(field.required(f"{path}.maxFailedIndexes", detail))
        if isinstance(parallelism, int) and parallelism > HIGH_COMPLETIONS_PARALLELISM:
            detail = f"must be less than or equal to {HIGH_COMPLETIONS_PARALLELISM} {tail}"
            errs.append(field.invalid(f"{path}.parallelism", parallelism, detail))
        if isinstance(most_failed, int) and most_failed > HIGH_COMPLETIONS_FAILED_INDEXES:
            detail = f"must be less than or equal to {HIGH_COMPLETIONS_FAILED_INDEXES} {tail}"
            errs.append(field.invalid(f"{path}.maxFailedIndexes", most_failed, detail))
    return errs
