"""The Service fields only some types may hold: ``externalTrafficPolicy`` (externally
reachable Services), ``healthCheckNodePort`` (a LoadBalancer with ``Local`` traffic),
``allocateLoadBalancerNodePorts`` and ``loadBalancerClass`` (LoadBalancers).

kube's validation refuses them on other types in its words and order; its update
strategy drops them when a Service changes to a type without them and the body kept
them as they were (dropTypeDependentFields), so re-sending a read Service with a new
``type`` succeeds.  The cluster IP and node port parts of that drop are in
serviceips.py and admission/nodeports.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_qualified_name

Obj = dict[str, Any]
TRAFFIC_POLICIES = ["Cluster", "Local"]
_LB_ONLY = "may only be used when `type` is 'LoadBalancer'"
_LOCAL_LB_ONLY = (
    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
)


def load_balancer(spec: Obj) -> bool:
    return spec.get("type") == "LoadBalancer"


def externally_accessible(spec: Obj) -> bool:
    """kube's ExternallyAccessible: node ports, a load balancer, or external IPs."""
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


def needs_health_check(spec: Obj) -> bool:
    return load_balancer(spec) and spec.get("externalTrafficPolicy") == "Local"


def type_field_errors(spec: Obj, port_errors: Callable[[int], list[str]]) -> list[FieldError]:
    """After the source ranges in kube's ValidateService; ``port_errors`` words a port
    number's problems (servicespec.port_number_errors)."""
    errs: list[FieldError] = []
    if spec.get("allocateLoadBalancerNodePorts") is not None and not load_balancer(spec):
        errs.append(field.forbidden("spec.allocateLoadBalancerNodePorts", _LB_ONLY))
    lb_class = spec.get("loadBalancerClass")
    if lb_class is not None:
        if not load_balancer(spec):
            errs.append(field.forbidden("spec.loadBalancerClass", _LB_ONLY))
        else:
            messages = is_qualified_name(lb_class)
            errs += [field.invalid("spec.loadBalancerClass", lb_class, m) for m in messages]
    policy = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(spec):
        if policy:
            detail = "may only be set for externally-accessible services"
            errs.append(field.invalid("spec.externalTrafficPolicy", policy, detail))
    elif not policy:
        errs.append(field.required("spec.externalTrafficPolicy"))
    elif policy not in TRAFFIC_POLICIES:
        errs.append(field.not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    port = spec.get("healthCheckNodePort") or 0
    if not needs_health_check(spec):
        if port:
            errs.append(field.invalid("spec.healthCheckNodePort", port, _LOCAL_LB_ONLY))
    elif not port:
        errs.append(field.required("spec.healthCheckNodePort"))
    elif isinstance(port, int):
        errs += [field.invalid("spec.healthCheckNodePort", port, m) for m in port_errors(port)]
    return errs


def load_balancer_class_update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """A LoadBalancer's class is fixed once it is one (its controller owns it)."""
    lb_class = new.get("loadBalancerClass")
    if load_balancer(old) and load_balancer(new) and lb_class != old.get("loadBalancerClass"):
        return [field.invalid("spec.loadBalancerClass", lb_class, "may not change once set")]
    return []


def drop_type_fields(new: Obj, old: Obj) -> None:
    """What a Service no longer has after changing type, where the body kept the old
    value (a changed value is left for validation to refuse)."""
    if load_balancer(old) and not load_balancer(new):
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if new.get(key) is not None and new.get(key) == old.get(key):
                del new[key]
    kept = new.get("externalTrafficPolicy") == old.get("externalTrafficPolicy")
    if kept and externally_accessible(old) and not externally_accessible(new):
        new.pop("externalTrafficPolicy", None)
