"""Which Service types hold which fields: ``externalTrafficPolicy`` (externally
reachable Services), ``healthCheckNodePort`` (a LoadBalancer with ``Local`` traffic),
``allocateLoadBalancerNodePorts`` and ``loadBalancerClass`` (LoadBalancers).

Defaulting (defaults.py), validation (servicespec.py) and node port allocation
(admission/nodeports.py) ask these questions; kube's update strategy drops the fields
when a Service changes to a type without them and the body kept them as they were
(dropTypeDependentFields), so re-sending a read Service with a new ``type`` succeeds.
The cluster IP and node port parts of that drop are in serviceips.py and
admission/nodeports.py.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


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
