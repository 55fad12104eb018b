"""LimitPodHardAntiAffinityTopology: required pod anti-affinity only per host (kube's plugin).

A required anti-affinity term over a wider topology (a zone) can keep a whole zone from
scheduling a workload's pods; this plugin allows only ``platform.io/hostname``.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext

Obj = dict[str, Any]
HOSTNAME = "platform.io/hostname"


class LimitPodHardAntiAffinityTopology:
    name = "LimitPodHardAntiAffinityTopology"

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or attrs.subresource or obj is None:
            return
        if (rt.group, rt.plural) != ("", "pods"):
            return
        anti = ((obj.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
        for term in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            key = term.get("topologyKey", "")
            if key != HOSTNAME:
                why = (
                    f"affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} "
                    f"but only key {HOSTNAME} is allowed"
                )
                raise errors.forbidden(
                    rt.plural, rt.group, obj.get("metadata", {}).get("name", ""), why
                )


def build(ctx: PluginContext) -> LimitPodHardAntiAffinityTopology:
    return LimitPodHardAntiAffinityTopology()
