"""Taints and tolerations: kube's validateNodeTaints and ValidateTolerations, and the
merge of tolerations admission plugins apply.

A toleration with no operator means Equal; one with an empty key and Exists tolerates
every taint; one with no effect tolerates every effect.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from platform_api.validation import field, podoptions
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.names import is_label_value, is_qualified_name

TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
# What kube lists when it refuses Lt or Gt with its comparison operators' gate off.
COMPARISON_OPERATORS = ["Equal", "Exists", "Lt", "Gt"]
_CANONICAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
_GO_INTEGER = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt takes at base 10
Toleration = dict[str, Any]


def _toleration_errors(toleration: Toleration, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    key, operator = toleration.get("key") or "", toleration.get("operator") or ""
    value, effect = toleration.get("value") or "", toleration.get("effect") or ""
    if key:
        errs += [field.invalid(f"{at}.key", key, m) for m in is_qualified_name(key)]
    if not key and operator != "Exists":
        detail = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
        errs.append(field.invalid(f"{at}.operator", operator, detail))
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
        errs.append(field.invalid(f"{at}.effect", effect, detail))
    if operator in ("Equal", ""):
        messages = is_label_value(value)
        if messages:
            errs.append(field.invalid(f"{at}.operator", value, ";".join(messages)))
    elif operator == "Exists":
        if value:
            detail = "value must be empty when `operator` is 'Exists'"
            errs.append(field.invalid(f"{at}.operator", value, detail))
    elif operator in ("Lt", "Gt"):
        if podoptions.current().toleration_comparisons:
            errs += _comparison_value(value, f"{at}.value")
        else:
            errs.append(field.not_supported(f"{at}.operator", operator, COMPARISON_OPERATORS))
    else:
        errs.append(field.not_supported(f"{at}.operator", operator, ["Equal", "Exists"]))
    if effect and effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
    return errs


def _comparison_value(value: str, at: str) -> list[FieldError]:
    """An Lt or Gt toleration's value: an integer in canonical form (kube's
    IsDecimalInteger), and one ``strconv.ParseInt`` reads as an int64; both are told."""
    errs = []
    if not value:
        errs.append(field.invalid(at, value, "must be non-empty"))
    elif not _CANONICAL_INTEGER.fullmatch(value):
        errs.append(field.invalid(at, value, "must be a valid decimal integer in canonical form"))
    if not _GO_INTEGER.fullmatch(value):
        problem = "invalid syntax"
    elif not -(1 << 63) <= int(value) < 1 << 63:
        problem = "value out of range"
    else:
        return errs
    errs.append(field.invalid(at, value, f'strconv.ParseInt: parsing "{value}": {problem}'))
    return errs


def go_toleration(toleration: Toleration) -> GoText:
    """A toleration as kube's duplicate error prints it: its Go struct as JSON."""
    parts = [
        f'"{go}":{field.go_quote(toleration.get(key) or "")}'
        for go, key in (
            ("Key", "key"),
            ("Operator", "operator"),
            ("Value", "value"),
            ("Effect", "effect"),
        )
    ]
    seconds = toleration.get("tolerationSeconds")
    parts.append(f'"TolerationSeconds":{"null" if seconds is None else seconds}')
    return GoText("{" + ",".join(parts) + "}")


def validate_tolerations(tolerations: list[Toleration], path: str) -> list[FieldError]:
    """kube's ValidateTolerations: each on its own (a pod may repeat one)."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        errs += _toleration_errors(toleration, f"{path}[{i}]")
    return errs


def validate_unique_tolerations(tolerations: list[Toleration], path: str) -> list[FieldError]:
    """A RuntimeClass's: ValidateTolerations, then duplicates by (key, operator, value,
    effect), its list keys."""
    errs = validate_tolerations(tolerations, path)
    seen: set[tuple[str, ...]] = set()
    for i, toleration in enumerate(tolerations):
        key = tuple(toleration.get(k) or "" for k in ("key", "operator", "value", "effect"))
        if key in seen:
            errs.append(field.duplicate(f"{path}[{i}]", go_toleration(toleration)))
        seen.add(key)
    return errs


def go_taint(taint: Toleration, time_added: str | None) -> GoText:
    """A taint as kube's duplicate error prints it: its Go struct as JSON."""
    parts = [
        f'"{go}":{field.go_quote(taint.get(key) or "")}'
        for go, key in (("Key", "key"), ("Value", "value"), ("Effect", "effect"))
    ]
    parts.append(f'"TimeAdded":{"null" if time_added is None else field.go_quote(time_added)}')
    return GoText("{" + ",".join(parts) + "}")


def _taint_errors(taint: Toleration, at: str) -> list[FieldError]:
    key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
    errs = [field.invalid(f"{at}.key", key, m) for m in is_qualified_name(key)]
    messages = is_label_value(value)
    if messages:
        errs.append(field.invalid(f"{at}.value", value, ";".join(messages)))
    if not effect:
        errs.append(field.required(f"{at}.effect"))
    elif effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
    return errs


def validate_taints(
    taints: list[Toleration], path: str, time_added: Callable[[Any], str | None]
) -> list[FieldError]:
    """kube's validateNodeTaints: each taint's key, value and effect, and one taint per
    key and effect (a repeat is reported once, as its Go struct; ``time_added`` renders
    its ``timeAdded`` as Go's metav1.Time writes it)."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        errs += _taint_errors(taint, at)
        pair = (str(taint.get("effect") or ""), str(taint.get("key") or ""))
        if pair in seen:
            shown = go_taint(taint, time_added(taint.get("timeAdded")))
            detail = "taints must be unique by key and effect pair"
            errs.append(FieldError(field.DUPLICATE, at, shown, detail))
            continue
        seen.add(pair)
    return errs


def _same(a: Toleration, b: Toleration) -> bool:
    strings = ("key", "operator", "value", "effect")
    same = all((a.get(k) or "") == (b.get(k) or "") for k in strings)
    return same and a.get("tolerationSeconds") == b.get("tolerationSeconds")


def tolerates_superset(wide: Toleration, narrow: Toleration) -> bool:
    """Whether ``wide`` tolerates every taint ``narrow`` does (kube's isSuperset)."""
    if _same(wide, narrow):
        return True
    key, wide_key = narrow.get("key") or "", wide.get("key") or ""
    operator = wide.get("operator") or ""
    if key != wide_key and (wide_key or operator != "Exists"):
        return False
    effect = wide.get("effect") or ""
    if (narrow.get("effect") or "") != effect and effect:
        return False
    if effect == "NoExecute" and wide.get("tolerationSeconds") is not None:
        seconds = narrow.get("tolerationSeconds")
        if seconds is None or seconds > wide["tolerationSeconds"]:
            return False
    if operator in ("Equal", ""):
        same_value = (narrow.get("value") or "") == (wide.get("value") or "")
        return narrow.get("operator") == "Equal" and same_value
    return operator == "Exists"


def merge_tolerations(first: list[Toleration], second: list[Toleration]) -> list[Toleration]:
    """Both lists, without those another one already covers (kube's MergeTolerations:
    of two equal ones the first stays)."""
    everything = [*first, *second]
    merged: list[Toleration] = []
    for i, toleration in enumerate(everything):
        if any(tolerates_superset(kept, toleration) for kept in merged):
            continue
        later = everything[i + 1 :]
        if any(
            not _same(toleration, other) and tolerates_superset(other, toleration)
            for other in later
        ):
            continue
        merged.append(toleration)
    return merged
