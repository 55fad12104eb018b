"""Quota scopes: which pods (and claims) a scoped quota tracks.

A quota's ``spec.scopes`` are ``Exists`` requirements; ``spec.scopeSelector`` adds
requirements with operators.  An object counts against a quota only when it matches all
of them (kube's ``podMatchesScopeFunc`` and ``pvcMatchesScopeFunc``).
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.podqos import pod_qos

Obj = dict[str, Any]
Requirement = dict[str, Any]

TERMINATING = "Terminating"
NOT_TERMINATING = "NotTerminating"
BEST_EFFORT = "BestEffort"
NOT_BEST_EFFORT = "NotBestEffort"
PRIORITY_CLASS = "PriorityClass"
CROSS_NAMESPACE_POD_AFFINITY = "CrossNamespacePodAffinity"
VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"
EXISTS, DOES_NOT_EXIST, IN, NOT_IN = "Exists", "DoesNotExist", "In", "NotIn"


class ScopeError(ValueError):
    pass


def quota_selectors(quota: Obj) -> list[Requirement]:
    """``getScopeSelectorsFromQuota``: scopes as ``Exists``, then the selector's expressions."""
    spec = quota.get("spec") or {}
    out: list[Requirement] = [
        {"scopeName": scope, "operator": EXISTS} for scope in spec.get("scopes") or []
    ]
    out += list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
    return out


def _selector_matches(req: Requirement, labels: dict[str, str]) -> bool:
    """A requirement as a label selector on ``{scopeName: value}``."""
    key, op = req.get("scopeName", ""), req.get("operator", "")
    values = req.get("values") or []
    if op == IN:
        return key in labels and labels[key] in values
    if op == NOT_IN:
        return key not in labels or labels[key] not in values
    if op == EXISTS:
        return key in labels
    if op == DOES_NOT_EXIST:
        return key not in labels
    raise ScopeError(f"{op!r} is not a valid pod selector operator")


def is_terminating(pod: Obj) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return isinstance(deadline, int) and deadline >= 0


def is_best_effort(pod: Obj) -> bool:
    """kube's ComputePodQOS is BestEffort (computed, as ``status.qosClass`` of a pod being
    created is not set yet)."""
    return pod_qos(pod) == "BestEffort"


def _cross_namespace(terms: list[Obj]) -> bool:
    return any(bool(t.get("namespaces")) or t.get("namespaceSelector") is not None for t in terms)


def uses_cross_namespace_affinity(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        required = rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        preferred = rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        if _cross_namespace(required) or _cross_namespace(
            [w.get("podAffinityTerm") or {} for w in preferred]
        ):
            return True
    return False


def pod_matches(req: Requirement, pod: Obj) -> bool:
    scope = req.get("scopeName")
    if scope == TERMINATING:
        return is_terminating(pod)
    if scope == NOT_TERMINATING:
        return not is_terminating(pod)
    if scope == BEST_EFFORT:
        return is_best_effort(pod)
    if scope == NOT_BEST_EFFORT:
        return not is_best_effort(pod)
    if scope == PRIORITY_CLASS:
        name = (pod.get("spec") or {}).get("priorityClassName") or ""
        if req.get("operator") == EXISTS:
            return bool(name)
        return _selector_matches(req, {PRIORITY_CLASS: name} if name else {})
    if scope == CROSS_NAMESPACE_POD_AFFINITY:
        return uses_cross_namespace_affinity(pod)
    return False


def volume_attributes_classes(pvc: Obj) -> set[str]:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    names = {spec.get("volumeAttributesClassName"), status.get("currentVolumeAttributesClassName")}
    names.add((status.get("modifyVolumeStatus") or {}).get("targetVolumeAttributesClassName"))
    return {n for n in names if n}


def pvc_matches(req: Requirement, pvc: Obj) -> bool:
    if req.get("scopeName") != VOLUME_ATTRIBUTES_CLASS:
        return False
    names = volume_attributes_classes(pvc)
    if req.get("operator") == EXISTS:
        return bool(names)
    if not names:
        return _selector_matches(req, {})
    return any(_selector_matches(req, {VOLUME_ATTRIBUTES_CLASS: n}) for n in names)


def no_scope(req: Requirement, obj: Obj) -> bool:
    """Kinds without scopes: a scoped quota never tracks them."""
    return False


def uncovered(limited: list[Requirement], matched: list[Requirement]) -> list[Requirement]:
    """Limited scopes that no matching quota names."""
    names = {m.get("scopeName") for m in matched}
    return [req for req in limited if req.get("scopeName") not in names]
