"""DefaultTolerationSeconds: pods tolerate unready and unreachable nodes for 300 s (kube's plugin).

A pod that does not already tolerate the NoExecute taint the node lifecycle controller
puts on a not-ready (or unreachable) node gets a toleration of it for
``--default-not-ready-toleration-seconds`` (``--default-unreachable-toleration-seconds``),
kube's 300 seconds, so that it is evicted five minutes after its node is lost.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.scheme.nodetaints import BRANDED, TaintKeys, keys

Obj = dict[str, Any]
DEFAULT_SECONDS = 300


def _tolerates(tolerations: list[Obj], key: str) -> bool:
    """An existing toleration of ``key`` (or of every key) for NoExecute (or every effect)."""
    return any(
        (t.get("key") or "") in (key, "") and (t.get("effect") or "") in ("NoExecute", "")
        for t in tolerations
    )


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"
    resources = frozenset({("", "pods")})

    def __init__(
        self,
        not_ready: int = DEFAULT_SECONDS,
        unreachable: int = DEFAULT_SECONDS,
        keys: TaintKeys = BRANDED,
    ) -> None:
        self._seconds = {keys.not_ready: not_ready, keys.unreachable: unreachable}

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or attrs.subresource or obj is None:
            return
        if (rt.group, rt.plural) != ("", "pods"):
            return
        spec = obj.setdefault("spec", {})
        tolerations = list(spec.get("tolerations") or [])
        added = [
            {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
            for key, seconds in self._seconds.items()
            if not _tolerates(tolerations, key)
        ]
        if added:
            spec["tolerations"] = tolerations + added


def build(ctx: PluginContext) -> DefaultTolerationSeconds:
    cfg = ctx.config
    return DefaultTolerationSeconds(
        cfg.default_not_ready_toleration_seconds,
        cfg.default_unreachable_toleration_seconds,
        keys(cfg.serve_upstream_groups),
    )
