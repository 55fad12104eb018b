"""A Service's cluster IP fields as kube's Service strategy prepares them, before
validation and allocation: values the server allocated kept across an update that leaves
them out (patchAllocatedValues), ``clusterIP`` and ``clusterIPs`` brought in line
(NormalizeClusterIPs), and the fields a Service turned ExternalName no longer has
dropped (dropTypeDependentFields).
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.servicetypes import drop_type_fields

Obj = dict[str, Any]


def cluster_ips(service: Obj | None) -> list[str]:
    """The addresses a Service holds (none when ExternalName or headless)."""
    spec = (service or {}).get("spec") or {}
    if not needs_cluster_ip(spec):
        return []
    return [ip for ip in spec.get("clusterIPs") or [] if ip and ip != "None"]


def needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def patch_allocated(new: Obj, old: Obj) -> None:
    """An update that leaves out what was allocated keeps it (a re-applied manifest)."""
    if needs_cluster_ip(old) and needs_cluster_ip(new):
        if not new.get("clusterIP") and old.get("clusterIP"):
            new["clusterIP"] = old["clusterIP"]
        if not new.get("clusterIPs") and old.get("clusterIPs"):
            new["clusterIPs"] = old["clusterIPs"]


def normalize(new: Obj, old: Obj | None) -> None:
    """kube's NormalizeClusterIPs: an old client sets ``clusterIP`` only."""
    ip, ips = new.get("clusterIP") or "", list(new.get("clusterIPs") or [])
    if old is None:
        if ip and not ips:
            new["clusterIPs"] = [ip]
        return
    old_ip, old_ips = old.get("clusterIP") or "", list(old.get("clusterIPs") or [])
    if old_ips and not ips and old_ip == ip:
        new["clusterIPs"] = ips = old_ips
    if old_ip != ip:
        if old_ip and not ip and ips == old_ips:
            new.pop("clusterIPs", None)
        if ip and ips == old_ips:
            new["clusterIPs"] = [ip]


def drop_type_dependent(new: Obj, old: Obj) -> None:
    """kube's dropTypeDependentFields: a Service turned ExternalName loses the cluster IP
    fields it kept unchanged (their addresses are freed by the repair controller)."""
    if not needs_cluster_ip(old) or needs_cluster_ip(new):
        return
    if (new.get("clusterIP"), new.get("clusterIPs")) == (
        old.get("clusterIP"),
        old.get("clusterIPs"),
    ):
        new.pop("clusterIP", None)
        new.pop("clusterIPs", None)
    for key in ("ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"):
        if new.get(key) == old.get(key):
            new.pop(key, None)


def prepare_update(new: Obj, old: Obj) -> None:
    patch_allocated(new, old)
    normalize(new, old)
    drop_type_dependent(new, old)
    drop_type_fields(new, old)
