"""NodeDeclaredFeatureValidator: an update of a bound pod that needs a node feature is
refused when the pod's node does not declare it (kube's ``nodedeclaredfeatures``; its
NodeDeclaredFeatures gate is beta and on in v1.36).

Of kube's feature registry only two features are inferred from an update: changed
pod-level resources (``InPlacePodLevelResourcesVerticalScaling``) and changed resources
of a non-sidecar init container (``InPlacePodVerticalScalingInitContainers``).  A node
declares what it supports in ``status.declaredFeatures``.  Only updates that change the
pod's generation (its spec) are checked, as in kube.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.cel.library.quantity import QuantityError, parse_quantity
from platform_api.errors import StatusError
from platform_api.registry.store import Store

Obj = dict[str, Any]
POD_LEVEL_RESIZE = "InPlacePodLevelResourcesVerticalScaling"
INIT_CONTAINER_RESIZE = "InPlacePodVerticalScalingInitContainers"


def _quantities(resources: Any) -> Any:
    """Resource requirements compared as kube's semantic equality compares them."""
    if not isinstance(resources, dict):
        return resources

    def value(text: Any) -> Decimal | Any:
        try:
            return parse_quantity(str(text))
        except QuantityError:
            return text

    return {
        key: {k: value(v) for k, v in (lists or {}).items()} if key != "claims" else lists
        for key, lists in resources.items()
        if lists
    }


def required_features(old: Obj, new: Obj) -> list[str]:
    """The features the change from ``old`` to ``new`` needs, in kube's (name) order."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    out = []
    old_res, new_res = old_spec.get("resources"), new_spec.get("resources")
    if (old_res is not None or new_res is not None) and _quantities(old_res) != _quantities(
        new_res
    ):
        out.append(POD_LEVEL_RESIZE)
    new_inits = new_spec.get("initContainers") or []
    for i, container in enumerate(old_spec.get("initContainers") or []):
        if container.get("restartPolicy") == "Always" or i >= len(new_inits):
            continue
        changed = _quantities(container.get("resources") or {}) != _quantities(
            new_inits[i].get("resources") or {}
        )
        if changed:
            out.append(INIT_CONTAINER_RESIZE)
            break
    return sorted(out)


class NodeDeclaredFeatureValidator:
    name = "NodeDeclaredFeatureValidator"

    def __init__(self, nodes: Store) -> None:
        self._nodes = nodes

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation != "UPDATE" or (rt.group, rt.plural) != ("", "pods"):
            return
        if attrs.subresource not in ("", "resize") or obj is None or old is None:
            return
        node = (obj.get("spec") or {}).get("nodeName") or ""
        generation = (obj.get("metadata") or {}).get("generation")
        if not node or (old.get("metadata") or {}).get("generation") == generation:
            return
        needed = required_features(old, obj)
        if not needed:
            return
        try:
            declared = (self._nodes.get("", node).object.get("status") or {}).get(
                "declaredFeatures"
            ) or []
        except StatusError as e:
            if e.code == 404:
                raise forbidden(attrs, obj, f'node "{node}" not found') from None
            raise forbidden(attrs, obj, f'failed to get node "{node}": {e.message}') from None
        missing = [name for name in needed if name not in declared]
        if missing:
            why = (
                f"pod update requires features {', '.join(missing)} which are not available "
                f'on node "{node}"'
            )
            raise forbidden(attrs, obj, why)


def build(ctx: PluginContext) -> NodeDeclaredFeatureValidator:
    return NodeDeclaredFeatureValidator(ctx.stores[("", "v1", "nodes")])
