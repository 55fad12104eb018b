"""A Service's IP family fields before its addresses are allocated, as kube's allocator
initialises them (initIPFamilyFields): defaulted, and checked against the cluster's one
family (this server's service range is single-stack).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.registry.servicespec import validate_cluster_ips
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.ips import parse_ip_sloppy

Obj = dict[str, Any]
OTHER = {"IPv4": "IPv6", "IPv6": "IPv4"}


def _headless_selectorless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None" and not spec.get("selector")


def init_families(spec: Obj, old: Obj | None, family: str, name: str) -> None:
    """Default ``ipFamilyPolicy`` and ``ipFamilies``; refuse what asks for a family this
    cluster does not have (``family`` is its only one)."""
    if spec.get("type") == "ExternalName":
        return
    if spec.get("ipFamilyPolicy") is None:
        if old is not None and old.get("ipFamilyPolicy"):
            spec["ipFamilyPolicy"] = old["ipFamilyPolicy"]
        elif _headless_selectorless(spec):
            spec["ipFamilyPolicy"] = "RequireDualStack"
        else:
            spec["ipFamilyPolicy"] = "SingleStack"
    _refuse(name, validate_cluster_ips(spec))
    policy = spec["ipFamilyPolicy"]
    ips: list[Any] = list(spec.get("clusterIPs") or [])
    families: list[Any] = list(spec.get("ipFamilies") or [])
    errs: list[FieldError] = []
    if policy == "SingleStack":
        for what, values in (("cluster IPs", ips), ("IP families", families)):
            if len(values) == 2:
                detail = f"must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"
                errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    for i, ip in enumerate(ips):
        if ip == "None":
            break
        address = parse_ip_sloppy(ip)
        inferred = "IPv6" if address is not None and address.version == 6 else "IPv4"
        if i >= len(families):
            if inferred != family:
                detail = f"{inferred} is not configured on this cluster"
                errs.append(field.invalid(f"spec.clusterIPs[{i}]", ips, detail))
            else:
                families.append(inferred)
    _refuse(name, errs)
    if _headless_selectorless(spec):
        families = families or [family]
        if len(families) < 2 and policy != "SingleStack":
            families.append(OTHER[families[0]])
        spec["ipFamilies"] = families
        return
    if policy == "RequireDualStack":
        detail = "this cluster is not configured for dual-stack services"
        errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    for i, wanted in enumerate(families):
        if wanted != family:
            errs.append(
                field.invalid(f"spec.ipFamilies[{i}]", wanted, "not configured on this cluster")
            )
    _refuse(name, errs)
    spec["ipFamilies"] = families or [family]


def _refuse(name: str, errs: list[FieldError]) -> None:
    if errs:
        raise errors.invalid("Service", "", name, errs)
