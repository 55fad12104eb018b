"""A Service's IP family fields before its addresses are allocated, as kube's allocator
initialises them (initIPFamilyFields): defaulted, and checked against the families of
the cluster's service ranges (``--service-cluster-ip-range``: one, or one of each).
"""

from __future__ import annotations

from collections.abc import Sequence
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


def init_families(spec: Obj, old: Obj | None, families: Sequence[str], name: str) -> None:
    """Default ``ipFamilyPolicy`` and ``ipFamilies``; refuse what asks for a family this
    cluster does not have (``families``: its own, the primary first), and an update that
    drops a secondary address or family without turning ``SingleStack``."""
    if spec.get("type") == "ExternalName":
        return
    if old is not None and unchanged_prefer_dual_stack(spec, old):
        return  # neither upgraded nor downgraded after the cluster's families change
    if spec.get("ipFamilyPolicy") is None:
        if old is not None and old.get("ipFamilyPolicy"):
            spec["ipFamilyPolicy"] = old["ipFamilyPolicy"]
        elif _headless_selectorless(spec):
            spec["ipFamilyPolicy"] = "RequireDualStack"
        else:
            spec["ipFamilyPolicy"] = "SingleStack"
    _refuse(name, validate_cluster_ips(spec))
    policy = spec["ipFamilyPolicy"]
    errs = _update_prep(spec, old, policy) if old is not None else []
    ips: list[Any] = list(spec.get("clusterIPs") or [])
    wanted: list[Any] = list(spec.get("ipFamilies") or [])
    if policy == "SingleStack":
        for what, values in (("cluster IPs", ips), ("IP families", wanted)):
            if len(values) == 2:
                detail = f"must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"
                errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    for i, ip in enumerate(ips):
        if ip == "None":
            break
        if i >= len(wanted):
            inferred = family_of(ip)
            if inferred not in families:
                detail = f"{inferred} is not configured on this cluster"
                errs.append(field.invalid(f"spec.clusterIPs[{i}]", ips, detail))
            else:
                wanted.append(inferred)
    _refuse(name, errs)
    if _headless_selectorless(spec):
        wanted = wanted or [families[0]]
        if len(wanted) < 2 and policy != "SingleStack":
            wanted.append(OTHER[wanted[0]])
        spec["ipFamilies"] = wanted
        return
    if policy == "RequireDualStack" and len(families) < 2:
        detail = "this cluster is not configured for dual-stack services"
        errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    for i, family in enumerate(wanted):
        if family not in families:
            errs.append(
                field.invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
            )
    _refuse(name, errs)
    wanted = wanted or [families[0]]
    if policy != "SingleStack" and len(wanted) == 1 and len(families) == 2:
        wanted.append(OTHER[wanted[0]])
    spec["ipFamilies"] = wanted


def _update_prep(spec: Obj, old: Obj, policy: str) -> list[FieldError]:
    """``SingleStack`` with the addresses and families unchanged keeps the primary ones
    only (clear intent); any other policy may not drop the secondary ones."""
    ips, old_ips = spec.get("clusterIPs") or [], old.get("clusterIPs") or []
    wanted, old_wanted = spec.get("ipFamilies") or [], old.get("ipFamilies") or []
    if policy == "SingleStack":
        if ips == old_ips and len(ips) > 1:
            spec["clusterIPs"] = ips[:1]
        if wanted == old_wanted and len(wanted) > 1:
            spec["ipFamilies"] = wanted[:1]
        return []
    errs: list[FieldError] = []
    for values, old_values, what in (
        (ips, old_ips, "cluster IP"),
        (wanted, old_wanted, "IP family"),
    ):
        if values and len(values) < len(old_values):
            detail = f"must be 'SingleStack' to release the secondary {what}"
            errs.append(field.invalid("spec.ipFamilyPolicy", policy, detail))
    return errs


def unchanged_prefer_dual_stack(spec: Obj, old: Obj) -> bool:
    """A ``PreferDualStack`` Service updated with the same type, addresses and families
    (kube's isMatchingPreferDualStackClusterIPFields): left as it is."""
    if spec.get("ipFamilyPolicy") is None or spec.get("type") != old.get("type"):
        return False
    if spec.get("type") not in (None, "ClusterIP", "NodePort", "LoadBalancer"):
        return False
    if spec.get("ipFamilyPolicy") != "PreferDualStack":
        return False
    if old.get("ipFamilyPolicy") not in (None, "PreferDualStack"):
        return False
    return (spec.get("clusterIPs") or []) == (old.get("clusterIPs") or []) and (
        spec.get("ipFamilies") or []
    ) == (old.get("ipFamilies") or [])


def family_of(ip: str) -> str:
    """The family of an address (validation has made sure it parses)."""
    address = parse_ip_sloppy(ip)
    return "IPv6" if address is not None and address.version == 6 else "IPv4"


def _refuse(name: str, errs: list[FieldError]) -> None:
    if errs:
        raise errors.invalid("Service", "", name, errs)
