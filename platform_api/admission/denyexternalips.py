"""DenyServiceExternalIPs: no new ``spec.externalIPs`` on Services (kube's plugin; off by
default).  An update may keep or drop addresses the Service already had, never add one."""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext

Obj = dict[str, Any]
DENIED = "Use of external IPs is denied by admission control"


def _external_ips(service: Obj | None) -> list[str]:
    return list(((service or {}).get("spec") or {}).get("externalIPs") or [])


class DenyServiceExternalIPs:
    name = "DenyServiceExternalIPs"

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or (rt.group, rt.plural) != (
            "",
            "services",
        ):
            return
        if attrs.subresource or obj is None:
            return
        wanted = _external_ips(obj)
        if not wanted:
            return
        had = set(_external_ips(old)) if old is not None else None
        if had is None or any(ip not in had for ip in wanted):
            raise forbidden(attrs, obj, DENIED)


def build(ctx: PluginContext) -> DenyServiceExternalIPs:
    return DenyServiceExternalIPs()
