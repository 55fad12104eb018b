"""A pod's resources as a whole: its quality-of-service class, as kube's ComputePodQOS
sets ``status.qosClass`` on create (from positive cpu and memory requests and limits,
the pod-level ``resources`` when given, else every regular and init container's), and
the pod-level requests kube defaults from the containers' and the pod-level limits."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from platform_api.quantity import Quantity, QuantityError, parse

Obj = dict[str, Any]
QOS_RESOURCES = ("cpu", "memory")


def _positive(raw: Any) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        if name not in QOS_RESOURCES:
            continue
        try:
            amount = parse(str(value)).value
        except QuantityError:
            continue  # never stored: validation refuses it
        if amount > 0:
            out[name] = amount
    return out


def pod_qos(pod: Obj) -> str:
    spec = pod.get("spec") or {}
    pod_level = isinstance(spec.get("resources"), dict)
    if pod_level:
        holders = [spec["resources"]]
    else:  # ephemeral containers take no resources
        holders = [
            (c or {}).get("resources") or {}
            for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
        ]
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for resources in holders:
        for name, amount in _positive(resources.get("requests")).items():
            requests[name] = requests.get(name, Decimal(0)) + amount
        found = _positive(resources.get("limits"))
        for name, amount in found.items():
            limits[name] = limits.get(name, Decimal(0)) + amount
        # Every container needs cpu and memory limits; pod-level ones, when it has any.
        if (not pod_level or resources.get("limits")) and len(found) < len(QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matched = all(limits.get(name) == amount for name, amount in requests.items())
    if guaranteed and matched and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def default_pod_level_requests(spec: Obj) -> None:
    """kube's defaultPodRequests: with pod-level limits, a pod-level request missing for
    cpu or memory is what the containers request together, else the pod-level limit."""
    resources = spec.get("resources")
    if not isinstance(resources, dict) or not resources.get("limits"):
        return
    requests = dict(resources.get("requests") or {})
    for name, value in container_requests(spec).items():
        requests.setdefault(name, value)
    for name, value in resources["limits"].items():
        if name in QOS_RESOURCES or name.startswith("hugepages-"):
            requests.setdefault(name, value)
    if requests:
        resources["requests"] = dict(sorted(requests.items()))


def _quantities(container: Any) -> dict[str, Quantity]:
    raw = ((container or {}).get("resources") or {}).get("requests") or {}
    out: dict[str, Quantity] = {}
    for name, value in raw.items():
        if name in QOS_RESOURCES:
            try:
                out[name] = parse(str(value))
            except QuantityError:
                continue
    return out


def container_requests(spec: Obj) -> dict[str, str]:
    """AggregateContainerRequests: the regular containers and sidecars together, or an
    init container with the sidecars started before it, whichever asks more."""
    total: dict[str, Quantity] = {}
    sidecars: dict[str, Quantity] = {}
    peak: dict[str, Quantity] = {}
    for container in spec.get("containers") or []:
        _add(total, _quantities(container))
    for container in spec.get("initContainers") or []:
        own = _quantities(container)
        if (container or {}).get("restartPolicy") == "Always":
            _add(sidecars, own)
            _max(peak, sidecars)
        else:
            _max(peak, _added(own, sidecars))
    _add(total, sidecars)
    _max(total, peak)
    return {name: str(q) for name, q in total.items()}


def _added(a: dict[str, Quantity], b: dict[str, Quantity]) -> dict[str, Quantity]:
    out = dict(a)
    _add(out, b)
    return out


def _add(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    for name, q in more.items():
        have = into.get(name)
        into[name] = q if have is None else Quantity(have.value + q.value, have.format)


def _max(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
    for name, q in other.items():
        if name not in into or q.value > into[name].value:
            into[name] = q
