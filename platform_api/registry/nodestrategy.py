"""The Node strategy (kube's pkg/registry/core/node): kubelets register Nodes with their
status; the removed dynamic kubelet configuration (``spec.configSource``,
``status.config``) is dropped unless the stored Node still has it; nodevalidation's rules.

Defaults as kube's decoder sets them: ``podCIDR`` and ``podCIDRs`` agree (the single
field wins when they differ, for older clients), allocatable defaults to capacity.
"""

from __future__ import annotations

import copy

from platform_api.registry.defaults import defaults
from platform_api.registry.nodevalidation import POD_CIDRS, validate_node, validate_node_update
from platform_api.registry.strategy import (
    GenericStrategy,
    Obj,
    StatusStrategy,
    Strategy,
    register,
)
from platform_api.validation.field import FieldError
from platform_api.validation.ips import cidr_warnings


@defaults("", "Node")
def default_node(node: Obj) -> None:
    spec = node.get("spec")
    if isinstance(spec, dict):
        _pod_cidrs(spec)
    status = node.get("status")
    if isinstance(status, dict):
        default_allocatable(status)


def _pod_cidrs(spec: Obj) -> None:
    """kube's v1 NodeSpec conversions, there and back."""
    single, many = spec.get("podCIDR") or "", spec.get("podCIDRs") or []
    if single and (not many or many[0] != single):
        many = spec["podCIDRs"] = [single]
    if many:
        spec["podCIDR"] = many[0]
    else:
        spec.pop("podCIDR", None)


def default_allocatable(status: Obj) -> None:
    """SetDefaults_NodeStatus: a Node that says nothing of allocatable may use it all."""
    if status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = copy.deepcopy(status["capacity"])


@register("", "Node")
class NodeStrategy(GenericStrategy):
    update_meta_checks = "UC"
    keep_status_on_create = True  # kubelets register nodes with their status

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        (obj.get("spec") or {}).pop("configSource", None)
        (obj.get("status") or {}).pop("config", None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        if (old.get("spec") or {}).get("configSource") is None:
            (new.get("spec") or {}).pop("configSource", None)

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_node(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old) + validate_node(new)
        return errs + validate_node_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's node status strategy runs ValidateNodeUpdate alone."""
        return self.validate_meta_update(new, old) + validate_node_update(new, old)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        spec = obj.get("spec") or {}
        out = ["spec.configSource: the feature is removed"] if spec.get("configSource") else []
        if spec.get("externalID"):
            out.append("spec.externalID: this field is deprecated, and is unused by Kubernetes")
        for i, cidr in enumerate(spec.get("podCIDRs") or []):
            out += cidr_warnings(cidr, f"{POD_CIDRS}[{i}]")
        return out

    def subresource_strategies(self) -> dict[str, Strategy]:
        return {"status": NodeStatusStrategy(self)}


class NodeStatusStrategy(StatusStrategy):
    """``/status``: the spec stays; ``status.config`` only where the Node has it."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        status = new.get("status")
        if isinstance(status, dict):
            if (old.get("status") or {}).get("config") is None:
                status.pop("config", None)
            default_allocatable(status)  # the decoder's default, as on the main resource
