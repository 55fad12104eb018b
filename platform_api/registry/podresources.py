"""Compute resources of a pod and its containers, and the resource claims they use, as
kube validates them: each container's requests and limits (``validateResourceRequirements``)
with the claims it names among the pod's, the pod's claims (``validatePodResourceClaims``),
and pod-level resources (``validatePodResources``: cpu, memory and huge pages, within
which the containers' requests and limits must fit)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from platform_api.quantity import Quantity, QuantityError, canonical, parse, parse_quantity
from platform_api.registry.gointernal import go_text
from platform_api.registry.limitrange import (
    container_resource_name,
    is_hugepages,
    overcommit_allowed,
    resource_name,
)
from platform_api.registry.podqos import container_requests
from platform_api.registry.quota_validation import is_extended as is_extended_resource_name
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

Obj = dict[str, Any]
NameCheck = Callable[[str, str], list[FieldError]]
POD_LEVEL = ["cpu", "hugepages-", "memory"]


def container_resources(resources: Obj, at: str, claims: Iterable[str]) -> list[FieldError]:
    return requirements(resources, at, container_resource_name, frozenset(claims))


def requirements(
    resources: Obj, at: str, name_check: NameCheck, claims: frozenset[str]
) -> list[FieldError]:
    """``validateResourceRequirements`` (names sorted: Go's map order is random)."""
    errs: list[FieldError] = []
    limits = resources.get("limits") or {}
    named: set[str] = set()
    for section in ("limits", "requests"):
        for name, amount in sorted((resources.get(section) or {}).items()):
            where = f"{at}.{section}[{name}]"
            errs += name_check(name, where)
            named.add(name)
            try:
                value = parse_quantity(str(amount))
            except ValueError:
                continue  # the schema decoder refused malformed quantities already
            if value < 0:
                errs.append(field.invalid(where, canonical(str(amount)), field.NONNEGATIVE))
            if is_extended_resource_name(name) and value != int(value):
                errs.append(field.invalid(where, canonical(str(amount)), "must be an integer"))
            if section == "requests":
                errs += _against_limit(name, amount, limits.get(name), at)
            if is_hugepages(name):
                errs += _whole_pages(name, amount, where)
    if any(is_hugepages(n) for n in named) and not named & {"cpu", "memory"}:
        errs.append(field.forbidden(at, "HugePages require cpu or memory"))
    return errs + _claim_references(resources.get("claims") or [], f"{at}.claims", claims)


def _against_limit(name: str, request: Any, limit: Any, at: str) -> list[FieldError]:
    """A request within its limit; equal to it, and the limit set, for a resource that
    allows no overcommit (huge pages, extended resources)."""
    if limit is None:
        if overcommit_allowed(name):
            return []
        return [
            field.required(f"{at}.limits", "Limit must be set for non overcommitable resources")
        ]
    try:
        asked, most = parse_quantity(str(request)), parse_quantity(str(limit))
    except ValueError:
        return []
    shown, limit_shown = canonical(str(request)), canonical(str(limit))
    if asked != most and not overcommit_allowed(name):
        detail = f"must be equal to {name} limit of {limit_shown}"
        return [field.invalid(f"{at}.requests", shown, detail)]
    if asked > most:
        detail = f"must be less than or equal to {name} limit of {limit_shown}"
        return [field.invalid(f"{at}.requests", shown, detail)]
    return []


def _whole_pages(name: str, amount: Any, where: str) -> list[FieldError]:
    """``IsHugePageResourceValueDivisible``: a whole number of the name's page size."""
    shown = canonical(str(amount))
    try:
        page, wanted = parse(name.removeprefix("hugepages-")), parse(str(amount))
        whole = (
            page.value > 0
            and page.milli_value() % 1000 == 0
            and wanted.int_value() % page.int_value() == 0
        )
    except QuantityError:
        whole = False
    if whole:
        return []
    return [field.invalid(where, shown, f"{shown} is not positive integer multiple of {name}")]


def _claim_references(refs: list[Any], at: str, claims: frozenset[str]) -> list[FieldError]:
    """``validateResourceClaimNames``: each a claim of the pod (or one request of it),
    named once."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, given in enumerate(refs):
        ref = given if isinstance(given, dict) else {}
        name, request, where = ref.get("name") or "", ref.get("request") or "", f"{at}[{i}]"
        if not name:
            errs.append(field.required(where))
            continue
        if name in seen:
            errs.append(field.duplicate(where, name))
        else:
            key = name
            if request:
                errs += field.checked(f"{where}.request", request, is_dns1123_label)
                key = f"{name}/{request}"
            if key in seen:
                errs.append(field.duplicate(where, key))
            elif not request:  # a request of the claim was named before: the claim overlaps
                errs += [field.duplicate(where, name) for k in seen if k.startswith(f"{name}/")]
            seen.add(key)
        if name not in claims:
            listed = ": " + ", ".join(sorted(claims)) if claims else " which is empty"
            why = "must be one of the names in pod.spec.resourceClaims" + listed
            errs.append(replace(field.not_found(where, name), detail=why))
    return errs


def pod_claims(claims: list[Any], at: str) -> tuple[frozenset[str], list[FieldError]]:
    """The pod's claim names and ``validatePodResourceClaims``' errors."""
    names: set[str] = set()
    errs: list[FieldError] = []
    for i, given in enumerate(claims):
        claim = given if isinstance(given, dict) else {}
        where, name = f"{at}[{i}]", claim.get("name") or ""
        if not name:
            errs.append(field.required(f"{where}.name"))
        elif name in names:
            errs.append(field.duplicate(f"{where}.name", name))
        else:
            errs += field.checked(f"{where}.name", name, is_dns1123_label)
            names.add(name)
        claim_name, template = (
            claim.get("resourceClaimName"),
            claim.get("resourceClaimTemplateName"),
        )
        if claim_name is not None and template is not None:
            why = (
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            )
            errs.append(field.invalid(where, go_text("core.PodResourceClaim", claim), why))
        if claim_name is None and template is None:
            why = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            errs.append(field.invalid(where, go_text("core.PodResourceClaim", claim), why))
        for key, value in (
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template),
        ):
            if value is not None:
                errs += [
                    field.invalid(f"{where}.{key}", value, m) for m in is_dns1123_subdomain(value)
                ]
    return frozenset(names), errs


def pod_resources(spec: Obj, path: str, claims: frozenset[str]) -> list[FieldError]:
    """``validatePodResources``."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    at = f"{path}.resources"
    if (spec.get("os") or {}).get("name") == "windows":
        return [field.forbidden(at, "may not be set for a windows pod")]
    errs: list[FieldError] = []
    if resources.get("claims") is not None:
        errs.append(
            field.forbidden(f"{at}.claims", "claims may not be set for Resources at pod-level")
        )
    errs += requirements(resources, at, _pod_level_name, claims)
    return errs + _consistency(spec, resources, at)


def _pod_level_name(name: str, at: str) -> list[FieldError]:
    errs = resource_name(name, at)
    if not errs and name not in ("cpu", "memory") and not name.startswith("hugepages-"):
        errs.append(field.not_supported(at, name, POD_LEVEL))
    return errs


def _consistency(spec: Obj, resources: Obj, at: str) -> list[FieldError]:
    """``validatePodResourceConsistency``: the containers' requests together, and each
    container's limit, within the pod's."""
    errs: list[FieldError] = []
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    for name, total in sorted(container_requests(spec).items()):
        pod = _quantity(requests.get(name))
        if pod is not None and parse(total).value > pod.value:
            why = f"must be greater than or equal to aggregate container requests of {total}"
            errs.append(field.invalid(f"{at}.requests[{name}]", str(pod), why))
    for i, container in enumerate(spec.get("containers") or []):
        own = ((container or {}).get("resources") or {}).get("limits") or {}
        for name, amount in sorted(own.items()):
            mine, pod = _quantity(amount), _quantity(limits.get(name))
            if mine is not None and pod is not None and mine.value > pod.value:
                why = f"must be less than or equal to pod limits of {pod}"
                errs.append(field.invalid(f"{at}.containers[{i}][{name}].limits", str(mine), why))
    return errs


def _quantity(value: Any) -> Quantity | None:
    try:
        return None if value is None else parse(str(value))
    except QuantityError:
        return None
