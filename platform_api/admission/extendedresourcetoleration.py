"""ExtendedResourceToleration: pods asking for an extended resource tolerate its taint.

Nodes offering an extended resource (``example.com/gpu``) are tainted with its name,
NoSchedule, to keep other pods off them; a pod requesting such a resource in any
container gets an ``Exists`` toleration of each one it asks for (kube's plugin).
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.registry.quota_validation import is_extended

Obj = dict[str, Any]
_STRINGS = ("key", "operator", "value", "effect")


def add_or_update_toleration(spec: Obj, toleration: Obj) -> None:
    """kube's AddOrUpdateTolerationInPod: replaces a toleration of the same key,
    operator, value and effect, or appends it."""
    kept: list[Obj] = []
    updated = False
    for existing in spec.get("tolerations") or []:
        if all((existing.get(k) or "") == (toleration.get(k) or "") for k in _STRINGS):
            if existing.get("tolerationSeconds") == toleration.get("tolerationSeconds"):
                return
            kept.append(dict(toleration))
            updated = True
            continue
        kept.append(existing)
    if not updated:
        kept.append(dict(toleration))
    spec["tolerations"] = kept


class ExtendedResourceToleration:
    name = "ExtendedResourceToleration"

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or attrs.subresource or obj is None:
            return
        if (rt.group, rt.plural) != ("", "pods"):
            return
        spec = obj.setdefault("spec", {})
        wanted: set[str] = set()
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                requests = (container.get("resources") or {}).get("requests") or {}
                wanted.update(name for name in requests if is_extended(name))
        for name in sorted(wanted):
            add_or_update_toleration(
                spec, {"key": name, "operator": "Exists", "effect": "NoSchedule"}
            )


def build(ctx: PluginContext) -> ExtendedResourceToleration:
    return ExtendedResourceToleration()
