"""TaintNodesByCondition: a new Node starts tainted ``node.platform.io/not-ready:NoSchedule``
(kube's ``node.kubernetes.io/not-ready`` under ``--serve-upstream-groups``).

kube's ``nodetaint`` plugin: nothing is scheduled to a node before its controller has
seen it Ready and lifted the taint.  A taint with the same key and effect (whatever its
value) already counts; the node's other taints are kept.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.scheme.nodetaints import BRANDED, NO_SCHEDULE, TaintKeys, keys


class TaintNodesByCondition:
    name = "TaintNodesByCondition"
    resources = frozenset({("", "nodes")})

    def __init__(self, keys: TaintKeys = BRANDED) -> None:
        self._not_ready = keys.not_ready  # kube's own key under --serve-upstream-groups

    def admit(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        rt = attrs.resource
        if attrs.operation != "CREATE" or (rt.group, rt.plural) != ("", "nodes"):
            return
        if attrs.subresource or obj is None:
            return
        spec = obj.setdefault("spec", {})
        taints = spec.get("taints") or []
        key = self._not_ready
        if not any(t.get("key") == key and t.get("effect") == NO_SCHEDULE for t in taints):
            spec["taints"] = [*taints, {"key": key, "effect": NO_SCHEDULE}]


def build(ctx: PluginContext) -> TaintNodesByCondition:
    return TaintNodesByCondition(keys(ctx.config.serve_upstream_groups))
