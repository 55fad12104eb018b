"""PodTopologyLabels: pods carry their node's zone and region labels (kube's plugin).

A pod created with ``spec.nodeName``, or a binding of a pod to a node, gets the node's
``topology.platform.io/zone`` and ``topology.platform.io/region`` labels (the binding
hands its labels on to the pod).  A node that does not exist gives none.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.registry.store import Store

Obj = dict[str, Any]
TOPOLOGY_LABELS = ("topology.platform.io/zone", "topology.platform.io/region")


class PodTopologyLabels:
    name = "PodTopologyLabels"
    resources = frozenset({("", "pods")})

    def __init__(self, nodes: Store) -> None:
        self._nodes = nodes

    def _labels(self, node: str) -> dict[str, str]:
        try:
            labels = self._nodes.get("", node).object.get("metadata", {}).get("labels") or {}
        except errors.StatusError as e:
            if e.code == 404:
                return {}
            raise
        return {k: v for k, v in labels.items() if k in TOPOLOGY_LABELS}

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation != "CREATE" or obj is None or (rt.group, rt.plural) != ("", "pods"):
            return
        if attrs.subresource == "binding":
            target = obj.get("target") or {}
            node = target.get("name", "") if target.get("kind") == "Node" else ""
        elif not attrs.subresource:
            node = (obj.get("spec") or {}).get("nodeName") or ""
        else:
            return
        copied = self._labels(node) if node else {}
        if copied:
            obj.setdefault("metadata", {}).setdefault("labels", {}).update(copied)


def build(ctx: PluginContext) -> PodTopologyLabels:
    return PodTopologyLabels(ctx.stores[("", "v1", "nodes")])
