"""HorizontalPodAutoscalers at autoscaling/v1, stored at autoscaling/v2: kube's conversion.

v1 carries only a CPU utilization target (and its current value); kube keeps what v1
cannot say in annotations, as JSON of v1's older metric types (``.../metrics``,
``.../current-metrics``), of the conditions, and of the behavior (its internal Go type,
so Go's field names), and reads them back on the way in.  A v1 object with no metric
at all gets kube's default: 80% CPU utilization.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

Obj = dict[str, Any]
PREFIX = "autoscaling.alpha.kubernetes.io/"
METRICS, CURRENT = PREFIX + "metrics", PREFIX + "current-metrics"
CONDITIONS, BEHAVIOR = PREFIX + "conditions", PREFIX + "behavior"
_ROUND_TRIP = (
    METRICS,
    BEHAVIOR,
    PREFIX + "scale-down-tolerance",
    PREFIX + "scale-up-tolerance",
    CURRENT,
    CONDITIONS,
)
DEFAULT_CPU_UTILIZATION = 80
_SOURCES = ("object", "pods", "resource", "containerResource", "external")


def _cpu_target(metric: Obj) -> int | None:
    resource = metric.get("resource") or {}
    if metric.get("type") == "Resource" and resource.get("name") == "cpu":
        utilization: int | None = (resource.get("target") or {}).get("averageUtilization")
        return utilization
    return None


def _pick(source: Obj, *keys: str) -> Obj:
    return {k: source[k] for k in keys if source.get(k) is not None}


def _moved(source: Obj, **names: str) -> Obj:
    """The fields of ``source`` present, under new names (``new=old``), in that order."""
    return {new: source[old] for new, old in names.items() if source.get(old) is not None}


def _ref(ref: Obj) -> Obj:
    return {"kind": ref.get("kind", ""), "name": ref.get("name", ""), **_pick(ref, "apiVersion")}


def _spec_source_v1(kind: str, source: Obj) -> Obj:
    target, metric = source.get("target") or {}, source.get("metric") or {}
    name = metric.get("name", "")
    if kind == "object":
        out = {"target": _ref(source.get("describedObject") or {}), "metricName": name}
        out["targetValue"] = target.get("value", "0")
        return {**out, **_pick(metric, "selector"), **_pick(target, "averageValue")}
    if kind == "pods":
        out = {"metricName": name, "targetAverageValue": target.get("averageValue", "0")}
        return {**out, **_pick(metric, "selector")}
    if kind == "external":
        values = _moved(target, targetValue="value", targetAverageValue="averageValue")
        return {"metricName": name, **_moved(metric, metricSelector="selector"), **values}
    out = {"name": source.get("name", "")}
    out.update(
        _moved(
            target, targetAverageUtilization="averageUtilization", targetAverageValue="averageValue"
        )
    )
    if kind == "containerResource":
        out["container"] = source.get("container", "")
    return out


def _spec_source_v2(kind: str, source: Obj) -> Obj:
    metric = {"name": source.get("metricName", ""), **_pick(source, "selector")}
    if kind == "object":
        value_type = "Value" if source.get("averageValue") is None else "AverageValue"
        target: Obj = {"type": value_type}
        value = source.get("targetValue", "0")
        if value_type == "Value" or value not in ("0", 0):
            target["value"] = value
        target.update(_pick(source, "averageValue"))
        described = _ref(source.get("target") or {})
        return {"describedObject": described, "metric": metric, "target": target}
    if kind == "pods":
        target = {"type": "AverageValue", "averageValue": source.get("targetAverageValue", "0")}
        return {"metric": metric, "target": target}
    if kind == "external":
        value_type = "AverageValue" if source.get("targetValue") is None else "Value"
        values = _moved(source, value="targetValue", averageValue="targetAverageValue")
        metric = {"name": metric["name"], **_moved(source, selector="metricSelector")}
        return {"metric": metric, "target": {"type": value_type, **values}}
    utilization = source.get("targetAverageUtilization")
    target = {"type": "AverageValue" if utilization is None else "Utilization"}
    target.update(
        _moved(
            source, averageUtilization="targetAverageUtilization", averageValue="targetAverageValue"
        )
    )
    out = {"name": source.get("name", ""), "target": target}
    if kind == "containerResource":
        out["container"] = source.get("container", "")
    return out


def _status_source_v1(kind: str, source: Obj) -> Obj:
    current, metric = source.get("current") or {}, source.get("metric") or {}
    name = metric.get("name", "")
    if kind == "object":
        out = {"target": _ref(source.get("describedObject") or {}), "metricName": name}
        out["currentValue"] = current.get("value", "0")
        return {**out, **_pick(metric, "selector"), **_pick(current, "averageValue")}
    if kind == "pods":
        out = {"metricName": name, "currentAverageValue": current.get("averageValue", "0")}
        return {**out, **_pick(metric, "selector")}
    if kind == "external":
        out = {"metricName": name, **_moved(metric, metricSelector="selector")}
        out["currentValue"] = current.get("value", "0")
        return {**out, **_moved(current, currentAverageValue="averageValue")}
    out = {
        "name": source.get("name", ""),
        **_moved(current, currentAverageUtilization="averageUtilization"),
    }
    out["currentAverageValue"] = current.get("averageValue", "0")
    if kind == "containerResource":
        out["container"] = source.get("container", "")
    return out


def _status_source_v2(kind: str, source: Obj) -> Obj:
    metric = {"name": source.get("metricName", ""), **_pick(source, "selector")}
    if kind == "object":
        current = {"value": source.get("currentValue", "0"), **_pick(source, "averageValue")}
        described = _ref(source.get("target") or {})
        return {"metric": metric, "current": current, "describedObject": described}
    if kind == "pods":
        return {
            "metric": metric,
            "current": {"averageValue": source.get("currentAverageValue", "0")},
        }
    if kind == "external":
        metric = {"name": metric["name"], **_moved(source, selector="metricSelector")}
        current = {"value": source.get("currentValue", "0")}
        current.update(_moved(source, averageValue="currentAverageValue"))
        return {"metric": metric, "current": current}
    current = {"averageValue": source.get("currentAverageValue", "0")}
    current.update(_moved(source, averageUtilization="currentAverageUtilization"))
    out = {"name": source.get("name", ""), "current": current}
    if kind == "containerResource":
        out["container"] = source.get("container", "")
    return out


def _convert_metrics(metrics: list[Obj], convert: Any) -> list[Obj]:
    out = []
    for metric in metrics:
        converted: Obj = {"type": metric.get("type", "")}
        for kind in _SOURCES:
            if isinstance(metric.get(kind), dict):
                converted[kind] = convert(kind, metric[kind])
        out.append(converted)
    return out


def _go_rules(rules: Obj | None) -> Obj | None:
    """An HPAScalingRules as Go marshals kube's internal type (no JSON tags)."""
    if rules is None:
        return None
    policies = [
        {
            "Type": p.get("type", ""),
            "Value": p.get("value", 0),
            "PeriodSeconds": p.get("periodSeconds", 0),
        }
        for p in rules.get("policies") or []
    ]
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": policies if rules.get("policies") is not None else None,
        "Tolerance": rules.get("tolerance"),
    }


def _rules_from_go(rules: Any) -> Obj | None:
    if not isinstance(rules, dict):
        return None
    out: Obj = {}
    if rules.get("StabilizationWindowSeconds") is not None:
        out["stabilizationWindowSeconds"] = rules["StabilizationWindowSeconds"]
    if rules.get("SelectPolicy") is not None:
        out["selectPolicy"] = rules["SelectPolicy"]
    if rules.get("Policies") is not None:
        out["policies"] = [
            {
                "type": p.get("Type", ""),
                "value": p.get("Value", 0),
                "periodSeconds": p.get("PeriodSeconds", 0),
            }
            for p in rules["Policies"]
        ]
    if rules.get("Tolerance") is not None:
        out["tolerance"] = rules["Tolerance"]
    return out


def _annotations(meta: Obj) -> Obj:
    return {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ROUND_TRIP}


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def _load(text: Any) -> Any:
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return None


def to_v1(obj: Obj) -> Obj:
    """An autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 serves it."""
    meta = copy.deepcopy(obj.get("metadata") or {})
    annotations = _annotations(meta)
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    v1_spec: Obj = {"scaleTargetRef": spec.get("scaleTargetRef") or {}}
    v1_spec.update(_pick(spec, "minReplicas"))
    v1_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    metrics = spec.get("metrics") or []
    cpu = next((t for t in map(_cpu_target, metrics) if t is not None), None)
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu
    others = [m for m in metrics if _cpu_target(m) is None]
    if others:
        annotations[METRICS] = _dump(_convert_metrics(others, _spec_source_v1))
    current = status.get("currentMetrics") or []
    if current:
        annotations[CURRENT] = _dump(_convert_metrics(current, _status_source_v1))
    behavior = spec.get("behavior")
    if behavior is not None:
        go = {
            "ScaleUp": _go_rules(behavior.get("scaleUp")),
            "ScaleDown": _go_rules(behavior.get("scaleDown")),
        }
        annotations[BEHAVIOR] = _dump(go)
    conditions = status.get("conditions") or []
    if conditions:
        listed = [
            {
                "type": c.get("type", ""),
                "status": c.get("status", ""),
                "lastTransitionTime": c.get("lastTransitionTime"),
                **_pick(c, "reason", "message"),
            }
            for c in conditions
        ]
        annotations[CONDITIONS] = _dump(listed)
    if annotations:
        meta["annotations"] = dict(sorted(annotations.items()))
    else:
        meta.pop("annotations", None)
    v1_status = _pick(status, "observedGeneration", "lastScaleTime")
    v1_status["currentReplicas"] = status.get("currentReplicas", 0)
    v1_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    for metric in current:
        resource = metric.get("resource") or {}
        utilization = (resource.get("current") or {}).get("averageUtilization")
        if (
            metric.get("type") == "Resource"
            and resource.get("name") == "cpu"
            and utilization is not None
        ):
            v1_status["currentCPUUtilizationPercentage"] = utilization
    return {
        "kind": obj.get("kind", "HorizontalPodAutoscaler"),
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": v1_spec,
        "status": v1_status,
    }


def to_v2(obj: Obj, defaults: bool = True) -> Obj:
    """An autoscaling/v1 HorizontalPodAutoscaler in the stored form, autoscaling/v2,
    defaulted as kube reads it back (``defaults``), else as its converter alone gives it
    (what the field manager compares and prunes in)."""
    meta = copy.deepcopy(obj.get("metadata") or {})
    given = meta.get("annotations") or {}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    v2_spec: Obj = {"scaleTargetRef": spec.get("scaleTargetRef") or {}}
    v2_spec.update(_pick(spec, "minReplicas"))
    v2_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    metrics: list[Obj] = []
    others = _load(given.get(METRICS)) if METRICS in given else None
    if isinstance(others, list):
        metrics = _convert_metrics([m for m in others if isinstance(m, dict)], _spec_source_v2)
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None or not metrics:
        utilization = DEFAULT_CPU_UTILIZATION if cpu is None else cpu
        target = {"type": "Utilization", "averageUtilization": utilization}
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    v2_spec["metrics"] = metrics
    go = _load(given.get(BEHAVIOR)) if BEHAVIOR in given else None
    if isinstance(go, dict):
        behavior = {
            k: v
            for k, v in (
                ("scaleUp", _rules_from_go(go.get("ScaleUp"))),
                ("scaleDown", _rules_from_go(go.get("ScaleDown"))),
            )
            if v is not None
        }
        if behavior:
            v2_spec["behavior"] = behavior
    v2_status = _pick(status, "observedGeneration", "lastScaleTime")
    if status.get("currentReplicas"):
        v2_status["currentReplicas"] = status["currentReplicas"]
    v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    v2_status["currentMetrics"] = None  # v2 writes null, not nothing
    current = _load(given.get(CURRENT)) if CURRENT in given else None
    if isinstance(current, list):
        listed = [m for m in current if isinstance(m, dict)]
        v2_status["currentMetrics"] = _convert_metrics(listed, _status_source_v2)
    elif status.get("currentCPUUtilizationPercentage") is not None:
        now = {"averageUtilization": status["currentCPUUtilizationPercentage"]}
        v2_status["currentMetrics"] = [
            {"type": "Resource", "resource": {"name": "cpu", "current": now}}
        ]
    conditions = _load(given.get(CONDITIONS)) if CONDITIONS in given else None
    if isinstance(conditions, list):
        v2_status["conditions"] = [c for c in conditions if isinstance(c, dict)]
    annotations = _annotations(meta)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out = {
        "apiVersion": "autoscaling/v2",
        "kind": obj.get("kind", "HorizontalPodAutoscaler"),
        "metadata": meta,
        "spec": v2_spec,
        "status": v2_status,
    }
    if defaults:
        default_autoscaler(out)
    return out


def converted_to_v2(obj: Obj) -> Obj:
    """``to_v2`` without the defaults."""
    return to_v2(obj, defaults=False)


def _rules(given: Any, default: Obj) -> Obj:
    """kube's GenerateHPAScale{Up,Down}Rules: the default rules, overridden field by field."""
    rules = copy.deepcopy(default)
    for key in ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"):
        if isinstance(given, dict) and given.get(key) is not None:
            rules[key] = given[key]
    return {
        k: rules[k]
        for k in ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance")
        if k in rules
    }


_SCALE_UP = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def default_autoscaler(obj: Obj) -> None:
    """kube's SetDefaults_HorizontalPodAutoscaler of the object's version."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if obj.get("apiVersion") == "autoscaling/v1":
        # The CPU target a v1 object without other metrics stands for, set before field
        # tracking: kube's managedFields own ``f:targetCPUUtilizationPercentage``.
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if spec.get("targetCPUUtilizationPercentage") is None and METRICS not in annotations:
            spec["targetCPUUtilizationPercentage"] = DEFAULT_CPU_UTILIZATION
        return
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _rules(behavior.get("scaleUp"), _SCALE_UP)
        behavior["scaleDown"] = _rules(behavior.get("scaleDown"), _SCALE_DOWN)
