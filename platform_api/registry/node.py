"""node.platform.io/v1 RuntimeClasses (kube's pkg/apis/node/validation and strategy).

A RuntimeClass names the container runtime handler pods ask for, and may carry the
overhead and scheduling constraints that the RuntimeClass admission plugin copies
into those pods.  The handler never changes; updates must name a resourceVersion.
"""

from __future__ import annotations

from typing import Any

from platform_api.quantity import QuantityError, parse
from platform_api.registry.limitrange import (
    container_resource_name,
    is_extended_resource_name,
    is_hugepages,
)
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label, validate_labels
from platform_api.validation.tolerations import validate_unique_tolerations

# Resources counted in whole units besides the extended ones (kube's integerResources).
INTEGER_RESOURCES = frozenset(
    (
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    )
)

# kube's deprecated node labels (pkg/api/node), branded, with why each is deprecated.
DEPRECATED_NODE_LABELS = {
    "beta.platform.io/arch": 'deprecated since v1.14; use "platform.io/arch" instead',
    "beta.platform.io/os": 'deprecated since v1.14; use "platform.io/os" instead',
    "failure-domain.beta.platform.io/region": (
        'deprecated since v1.17; use "topology.platform.io/region" instead'
    ),
    "failure-domain.beta.platform.io/zone": (
        'deprecated since v1.17; use "topology.platform.io/zone" instead'
    ),
    "beta.platform.io/instance-type": (
        'deprecated since v1.17; use "node.platform.io/instance-type" instead'
    ),
    "app.platform.io/created-by": "deprecated since v1.9",
    "scheduler.alpha.platform.io/preferAvoidPods": (
        "deprecated since v1.22; use Taints and Tolerations instead"
    ),
    "node-role.platform.io/master": 'use "node-role.platform.io/control-plane" instead',
}


def validate_overhead(limits: dict[str, Any], path: str) -> list[FieldError]:
    """The limits half of kube's ValidateContainerResourceRequirements: resource names,
    non-negative quantities, whole numbers where counted, hugepages with cpu or memory."""
    errs: list[FieldError] = []
    for name, text in limits.items():
        at = f"{path}.limits[{name}]"
        errs += container_resource_name(name, at)
        try:
            quantity = parse(str(text))
        except QuantityError as e:
            errs.append(field.invalid(at, text, str(e)))
            continue
        if quantity.value < 0:
            errs.append(field.invalid(at, str(quantity), "must be greater than or equal to 0"))
        whole = name in INTEGER_RESOURCES or is_extended_resource_name(name)
        if whole and quantity.milli_value() % 1000:
            errs.append(field.invalid(at, str(quantity), "must be an integer"))
    if any(is_hugepages(name) for name in limits) and not {"cpu", "memory"} & set(limits):
        errs.append(field.forbidden(path, "HugePages require cpu or memory"))
    return errs


def validate_runtime_class(obj: Obj) -> list[FieldError]:
    """Handler, overhead and scheduling (ObjectMeta is the strategy's)."""
    errs: list[FieldError] = []
    handler = obj.get("handler") or ""
    if not handler:
        errs.append(field.required("handler"))
    else:
        errs += [field.invalid("handler", handler, m) for m in is_dns1123_label(handler)]
    overhead = obj.get("overhead")
    if overhead is not None:
        errs += validate_overhead(overhead.get("podFixed") or {}, "overhead")
    scheduling = obj.get("scheduling")
    if scheduling is not None:
        selector = scheduling.get("nodeSelector")
        if selector is not None:
            errs += validate_labels(selector, "scheduling.nodeSelector")
        tolerations = scheduling.get("tolerations") or []
        errs += validate_unique_tolerations(tolerations, "scheduling.tolerations")
    return errs


@register("node.platform.io", "RuntimeClass")
class RuntimeClassStrategy(GenericStrategy):
    allow_create_on_update = True
    allow_unconditional_update = False

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_runtime_class(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_runtime_class(new) + super().validate_update(new, old)
        if new.get("handler") != old.get("handler"):
            errs.append(field.invalid("handler", new.get("handler"), "field is immutable"))
        return errs

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        selector = (obj.get("scheduling") or {}).get("nodeSelector") or {}
        return [
            f"scheduling.nodeSelector: {DEPRECATED_NODE_LABELS[key]}"
            for key in selector
            if key in DEPRECATED_NODE_LABELS
        ]
