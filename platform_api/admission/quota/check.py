"""kube's ``CheckRequest``: whether a write fits every quota it falls under, and the
quotas' usage if it is admitted.

Pure: quotas in, charged copies out (or a refusal).  Only quotas whose ``status.hard``
names something the evaluator measures, and whose scopes the object is in, take part.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.quota import resources as rl
from platform_api.admission.quota.evaluators import (
    Evaluator,
    matches,
    matching_scopes,
    uncovered_scopes,
)
from platform_api.admission.quota.resources import ResourceList
from platform_api.admission.quota.scopes import Requirement, quota_selectors

Obj = dict[str, Any]


@dataclass(frozen=True)
class LimitedResource:
    """One ``limitedResources`` entry of the plugin's configuration."""

    group: str
    resource: str
    match_contains: tuple[str, ...] = ()
    match_scopes: tuple[Requirement, ...] = field(default_factory=tuple)


def _forbid(attrs: Attributes, obj: Obj, message: str) -> errors.StatusError:
    """``admission.NewForbidden``: named after the object (or its generateName)."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return errors.forbidden(attrs.resource.plural, attrs.resource.group, name, message)


def _hard(quota: Obj) -> ResourceList:
    return rl.from_object((quota.get("status") or {}).get("hard"))


def _used(quota: Obj) -> ResourceList:
    return rl.from_object((quota.get("status") or {}).get("used"))


def _limited_names(
    ev: Evaluator, attrs: Attributes, obj: Obj, limited: list[LimitedResource]
) -> set[str]:
    """Resource names the configuration says only a covering quota may grant."""
    rt = attrs.resource
    mine = [lr for lr in limited if (lr.group, lr.resource) == (rt.group, rt.plural)]
    if not mine:
        return set()
    usage = ev.usage(obj)
    return {
        name
        for lr in mine
        for name, value in usage.items()
        if value.value > 0 and any(part in name for part in lr.match_contains)
    }


def check_request(
    quotas: list[Obj],
    attrs: Attributes,
    obj: Obj,
    old: Obj | None,
    ev: Evaluator,
    limited: list[LimitedResource],
) -> list[Obj]:
    """The quotas with this request charged (the same objects when nothing changes)."""
    limited_scopes = [s for lr in limited for s in matching_scopes(ev, obj, list(lr.match_scopes))]
    limited_names = _limited_names(ev, attrs, obj, limited)
    interesting: list[int] = []
    restricted: set[str] = set()
    restricted_scopes: list[Requirement] = []
    for i, quota in enumerate(quotas):
        restricted_scopes += matching_scopes(ev, obj, quota_selectors(quota))
        if not matches(ev, quota, obj):
            continue
        hard = _hard(quota)
        names = ev.matching_resources(hard)
        name = quota["metadata"]["name"]
        problem = ev.constraints(names, obj)
        if problem:
            raise _forbid(attrs, obj, f"failed quota: {name}: {problem}")
        used = _used(quota)
        if any(n not in used for n in names):
            listed = ",".join(sorted(names))
            raise _forbid(attrs, obj, f"status unknown for quota: {name}, resources: {listed}")
        interesting.append(i)
        restricted.update(names)

    usage = ev.usage(obj)
    below = rl.negative(usage)
    if below:
        listed = ",".join(sorted(below))
        raise _forbid(attrs, obj, f"quota usage is negative for resource(s): {listed}")
    deltas, unscoped = _deltas(quotas, interesting, attrs, obj, old, ev, usage)
    if interesting and not deltas:
        return quotas
    if not interesting and not rl.remove_zeros(unscoped):
        return quotas

    uncovered_names = sorted(limited_names - restricted)
    if uncovered_names:
        raise _forbid(attrs, obj, f"insufficient quota to consume: {','.join(uncovered_names)}")
    missing = uncovered_scopes(ev, limited_scopes, restricted_scopes)
    if missing:
        # a plain error in kube: a 500 without a reason
        message = f"insufficient quota to match these scopes: {_go_requirements(missing)}"
        raise errors.StatusError(500, "", message)
    if not interesting:
        return quotas
    return _charge(quotas, deltas, attrs, obj)


def _deltas(
    quotas: list[Obj],
    interesting: list[int],
    attrs: Attributes,
    obj: Obj,
    old: Obj | None,
    ev: Evaluator,
    usage: ResourceList,
) -> tuple[dict[int, ResourceList], ResourceList]:
    """What each interesting quota is charged (zeros dropped), and the charge when none is."""
    deltas = dict.fromkeys(interesting, usage)
    unscoped: ResourceList = usage if attrs.operation == "CREATE" else {}
    if attrs.operation == "UPDATE":
        if old is None:
            raise _forbid(
                attrs,
                obj,
                "unable to get previous usage since prior version of object was not found",
            )
        if (old.get("metadata") or {}).get("resourceVersion"):
            delta = rl.subtract_non_negative(usage, ev.usage(old))
            unscoped = delta
            for i in interesting:
                if matches(ev, quotas[i], old):
                    deltas[i] = delta
        else:
            unscoped = usage
    kept = {i: rl.remove_zeros(d) for i, d in deltas.items()}
    return {i: d for i, d in kept.items() if d}, unscoped


def _charge(
    quotas: list[Obj], deltas: dict[int, ResourceList], attrs: Attributes, obj: Obj
) -> list[Obj]:
    out = [copy.deepcopy(q) for q in quotas]
    for i, delta in deltas.items():
        quota = out[i]
        hard, used = _hard(quota), _used(quota)
        requested = rl.mask(delta, hard)
        new_used = rl.add(used, requested)
        if attrs.subresource != "status":
            fits, exceeded = rl.less_than_or_equal(rl.mask(new_used, requested), hard)
            if not fits:
                raise _forbid(
                    attrs,
                    obj,
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {rl.pretty(rl.mask(requested, exceeded))}, "
                    f"used: {rl.pretty(rl.mask(used, exceeded))}, "
                    f"limited: {rl.pretty(rl.mask(hard, exceeded))}",
                )
        quota.setdefault("status", {})["used"] = rl.to_object(new_used)
    return out


def _go_requirements(reqs: list[Requirement]) -> str:
    """``%v`` of a slice of ScopedResourceSelectorRequirement."""
    parts = [
        f"{{{r.get('scopeName', '')} {r.get('operator', '')} [{' '.join(r.get('values') or [])}]}}"
        for r in reqs
    ]
    return "[" + " ".join(parts) + "]"
