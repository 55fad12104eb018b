"""Where a pod may run: node and pod affinity, topology spread constraints (kube's
validateAffinity and validateTopologySpreadConstraints), and the label selectors kube
completes from ``matchLabelKeys`` / ``mismatchLabelKeys`` when a pod is created."""

from __future__ import annotations

from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)

Obj = dict[str, Any]
TERMS = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
WHEN_UNSATISFIABLE = ["DoNotSchedule", "ScheduleAnyway"]
INCLUSION_POLICIES = ["Honor", "Ignore"]
NOT_POSITIVE = "must be greater than zero"
NO_SELECTOR = "must not be specified when labelSelector is not set"


def validate_affinity(affinity: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        errs += _node_affinity(node, f"{at}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if isinstance(terms, dict):
            errs += _pod_affinity(terms, f"{at}.{kind}")
    return errs


def _node_affinity(node: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required = node.get(TERMS)
    if isinstance(required, dict):
        terms = required.get("nodeSelectorTerms") or []
        path = f"{at}.{TERMS}.nodeSelectorTerms"
        if not terms:
            errs.append(field.required(path, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            errs += node_selector_term(term or {}, f"{path}[{i}]", label_values=True)
    for i, preferred in enumerate(node.get(PREFERRED) or []):
        path = f"{at}.{PREFERRED}[{i}]"
        errs += _weight(preferred.get("weight", 0), f"{path}.weight")
        term = preferred.get("preference") or {}
        errs += node_selector_term(term, f"{path}.preference", label_values=False)
    return errs


def _weight(weight: Any, at: str) -> list[FieldError]:
    if isinstance(weight, int) and 1 <= weight <= 100:
        return []
    return [field.invalid(at, weight, "must be in the range 1-100")]


def node_selector_term(term: Obj, at: str, label_values: bool) -> list[FieldError]:
    """Required terms' values must be label values too; preferred ones' need not."""
    errs: list[FieldError] = []
    for j, expr in enumerate(term.get("matchExpressions") or []):
        path = f"{at}.matchExpressions[{j}]"
        errs += _node_requirement(expr, path)
        if label_values:
            for k, value in enumerate(expr.get("values") or []):
                errs += [
                    field.invalid(f"{path}.values[{k}]", value, m) for m in is_label_value(value)
                ]
    for j, expr in enumerate(term.get("matchFields") or []):
        errs += _node_field_requirement(expr, f"{at}.matchFields[{j}]")
    return errs


def _node_requirement(expr: Obj, at: str) -> list[FieldError]:
    op, values = expr.get("operator", ""), expr.get("values") or []
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if not values:
            why = "must be specified when `operator` is 'In' or 'NotIn'"
            errs.append(field.required(f"{at}.values", why))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            why = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errs.append(field.forbidden(f"{at}.values", why))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            why = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            errs.append(field.required(f"{at}.values", why))
    else:
        errs.append(
            field.invalid(f"{at}.operator", field.named(op), "not a valid selector operator")
        )
    key = expr.get("key", "")
    return errs + [field.invalid(f"{at}.key", key, m) for m in is_qualified_name(key)]


def _node_field_requirement(expr: Obj, at: str) -> list[FieldError]:
    op, values = expr.get("operator", ""), expr.get("values") or []
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            why = (
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
            errs.append(field.required(f"{at}.values", why))
    else:
        errs.append(
            field.invalid(f"{at}.operator", field.named(op), "not a valid selector operator")
        )
    key = expr.get("key", "")
    if key != "metadata.name":
        return [*errs, field.invalid(f"{at}.key", key, "not a valid field selector key")]
    for k, value in enumerate(values):
        errs += [field.invalid(f"{at}.values[{k}]", value, m) for m in is_dns1123_subdomain(value)]
    return errs


def _pod_affinity(affinity: Obj, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, term in enumerate(affinity.get(TERMS) or []):
        errs += _pod_affinity_term(term or {}, f"{at}.{TERMS}[{i}]")
    for i, weighted in enumerate(affinity.get(PREFERRED) or []):
        path = f"{at}.{PREFERRED}[{i}]"
        errs += _weight(weighted.get("weight", 0), f"{path}.weight")
        errs += _pod_affinity_term(weighted.get("podAffinityTerm") or {}, f"{path}.podAffinityTerm")
    return errs


def _pod_affinity_term(term: Obj, at: str) -> list[FieldError]:
    selector = term.get("labelSelector")
    errs = validate_label_selector(selector, f"{at}.labelSelector")
    errs += validate_label_selector(term.get("namespaceSelector"), f"{at}.namespaceSelector")
    for name in term.get("namespaces") or []:  # kube's path names no index here
        errs += [field.invalid(f"{at}.namespace", name, m) for m in is_dns1123_label(name)]
    match, mismatch = term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
    errs += _label_keys(match, selector, f"{at}.matchLabelKeys")
    errs += _label_keys(mismatch, selector, f"{at}.mismatchLabelKeys")
    both = set(mismatch)
    for i, key in enumerate(match):
        if key in both:
            why = "exists in both matchLabelKeys and mismatchLabelKeys"
            errs.append(field.invalid(f"{at}.matchLabelKeys[{i}]", key, why))
    topology = term.get("topologyKey", "")
    if not topology:
        errs.append(field.required(f"{at}.topologyKey", "can not be empty"))
    return errs + [
        field.invalid(f"{at}.topologyKey", topology, m) for m in is_qualified_name(topology)
    ]


def _label_keys(keys: list[str], selector: Any, at: str) -> list[FieldError]:
    """Label keys whose values complete the selector (kube merges them into it when the
    pod is created, so overlapping it is no longer refused)."""
    if not keys:
        return []
    if selector is None:
        return [field.forbidden(at, NO_SELECTOR)]
    errs: list[FieldError] = []
    for i, key in enumerate(keys):
        errs += [field.invalid(f"{at}[{i}]", key, m) for m in is_qualified_name(key)]
    return errs


def validate_topology_spread(constraints: list[Obj], at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, constraint in enumerate(constraints):
        path = f"{at}[{i}]"
        skew = constraint.get("maxSkew", 0)
        if isinstance(skew, int) and skew <= 0:
            errs.append(field.invalid(f"{path}.maxSkew", skew, NOT_POSITIVE))
        key, when = constraint.get("topologyKey", ""), constraint.get("whenUnsatisfiable", "")
        if not key:
            errs.append(field.required(f"{path}.topologyKey", "can not be empty"))
        if when not in WHEN_UNSATISFIABLE:
            errs.append(field.not_supported(f"{path}.whenUnsatisfiable", when, WHEN_UNSATISFIABLE))
        if any(
            (c.get("topologyKey", ""), c.get("whenUnsatisfiable", "")) == (key, when)
            for c in constraints[i + 1 :]
        ):
            where = f"{path}.{{topologyKey, whenUnsatisfiable}}"
            errs.append(field.duplicate(where, f"{{{key}, {when}}}"))
        errs += _min_domains(constraint.get("minDomains"), when, f"{path}.minDomains")
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = constraint.get(policy)
            if value is not None and value not in INCLUSION_POLICIES:
                errs.append(field.not_supported(f"{path}.{policy}", value, INCLUSION_POLICIES))
        selector = constraint.get("labelSelector")
        errs += _label_keys(
            constraint.get("matchLabelKeys") or [], selector, f"{path}.matchLabelKeys"
        )
        errs += validate_label_selector(selector, f"{path}.labelSelector")
    return errs


def _min_domains(value: Any, when: str, at: str) -> list[FieldError]:
    if value is None:
        return []
    errs = []
    if isinstance(value, int) and value <= 0:
        errs.append(field.invalid(at, value, NOT_POSITIVE))
    if when != "DoNotSchedule":
        why = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
        errs.append(field.invalid(at, value, why))
    return errs


def merge_label_keys(pod: Obj) -> None:
    """On create, kube turns each ``matchLabelKeys`` key the pod carries into an ``In``
    requirement of the selector (``mismatchLabelKeys``: ``NotIn``), so the scheduler and
    every later reader see one selector."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    spec = pod.get("spec") or {}
    for constraint in spec.get("topologySpreadConstraints") or []:
        _merge(constraint, labels, constraint.get("matchLabelKeys") or [], [])
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        for term in terms.get(TERMS) or []:
            _merge(
                term, labels, term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
            )
        for weighted in terms.get(PREFERRED) or []:
            term = weighted.get("podAffinityTerm") or {}
            _merge(
                term, labels, term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
            )


def _merge(term: Obj, labels: dict[str, str], match: list[str], mismatch: list[str]) -> None:
    selector = term.get("labelSelector")
    if not isinstance(selector, dict):
        return
    added = [
        {"key": key, "operator": op, "values": [labels[key]]}
        for keys, op in ((match, "In"), (mismatch, "NotIn"))
        for key in keys
        if key in labels
    ]
    if added:
        selector["matchExpressions"] = [*(selector.get("matchExpressions") or []), *added]
