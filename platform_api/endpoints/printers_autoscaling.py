"""Table columns of HorizontalPodAutoscalers (kube's printHorizontalPodAutoscaler): what
``kubectl get hpa`` shows, from the v2 form whichever version was asked for."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age
from platform_api.endpoints.tables import COLUMNS, Column, Printer
from platform_api.registry.hpaconversion import to_v2

Obj = dict[str, Any]
_SHOWN = 2  # kube lists the first two metrics, then "+ N more..."


def _value(holder: Obj | None, key: str) -> str:
    """A quantity as Go's ``(*Quantity).String`` prints it (``<nil>`` when absent)."""
    value = (holder or {}).get(key)
    return "<nil>" if value is None else str(value)


def _percent(holder: Obj | None, key: str, absent: str) -> str:
    value = (holder or {}).get(key)
    return absent if value is None else f"{value}%"


def _metric(spec: Obj, status: Obj | None) -> str:
    """One target, current/target; "<unknown>" when the i-th status is of another kind."""
    kind = spec.get("type") or ""
    field = _FIELDS.get(kind)
    if field is None:
        return "<unknown type>"
    source = spec.get(field) or {}
    target = source.get("target") or {}
    seen = (status or {}).get(field)
    current = (seen.get("current") or {}) if isinstance(seen, dict) else None
    if kind in ("External", "Object", "Pods"):
        if kind != "Pods" and target.get("averageValue") is not None:
            known = current is not None and current.get("averageValue") is not None
            now = _value(current, "averageValue") if known else "<unknown>"
            return f"{now}/{target['averageValue']} (avg)"
        key = "averageValue" if kind == "Pods" else "value"
        now = _value(current, key) if current is not None else "<unknown>"
        return f"{now}/{_value(target, key)}"
    name = source.get("name", "")
    if target.get("averageValue") is not None:
        now = _value(current, "averageValue") if current is not None else "<unknown>"
        return f"{name}: {now}/{target['averageValue']}"
    now = _percent(current, "averageUtilization", "<unknown>")
    return f"{name}: {now}/{_percent(target, 'averageUtilization', '<auto>')}"


_FIELDS = {
    "External": "external",
    "Pods": "pods",
    "Object": "object",
    "Resource": "resource",
    "ContainerResource": "containerResource",
}


def format_metrics(specs: list[Obj], statuses: list[Obj]) -> str:
    """kube's formatHPAMetrics: each target as current/target, the i-th status beside
    the i-th spec."""
    if not specs:
        return "<none>"
    shown = [_metric(s, statuses[i] if i < len(statuses) else None) for i, s in enumerate(specs)]
    text = ", ".join(shown[:_SHOWN])
    return f"{text} + {len(shown) - _SHOWN} more..." if len(shown) > _SHOWN else text


def _cells(obj: Obj) -> list[Any]:
    if obj.get("apiVersion") == "autoscaling/v1":
        obj = to_v2(obj)
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [
        meta.get("name", ""),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        format_metrics(spec.get("metrics") or [], status.get("currentMetrics") or []),
        "<unset>" if minimum is None else str(minimum),
        spec.get("maxReplicas", 0),
        status.get("currentReplicas", 0),
        age(meta.get("creationTimestamp")),
    ]


_COLUMNS = (
    NAME,
    Column(
        "Reference",
        "string",
        "",
        "scaleTargetRef points to the target resource to scale, and is used to the pods for "
        "which metrics should be collected, as well as to actually change the replica count.",
    ),
    Column(
        "Targets",
        "string",
        "",
        "metrics contains the specifications for which to use to calculate the desired replica "
        "count (the maximum replica count across all metrics will be used).  The desired "
        "replica count is calculated multiplying the ratio between the target value and the "
        "current value by the current number of pods.  Ergo, metrics used must decrease as the "
        "pod count is increased, and vice-versa.  See the individual metric source types for "
        "more information about how each type of metric must respond. If not set, the default "
        "metric will be set to 80% average CPU utilization.",
    ),
    Column(
        "MinPods",
        "string",
        "",
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can "
        "scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha "
        "feature gate HPAScaleToZero is enabled and at least one Object or External metric is "
        "configured.  Scaling is active as long as at least one metric value is available.",
    ),
    Column(
        "MaxPods",
        "string",
        "",
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can "
        "scale up. It cannot be less that minReplicas.",
    ),
    Column(
        "Replicas",
        "string",
        "",
        "currentReplicas is current number of replicas of pods managed by this autoscaler, as "
        "last seen by the autoscaler.",
    ),
    AGE,
)
COLUMNS[("autoscaling", "horizontalpodautoscalers")] = Printer(_COLUMNS, _cells)
