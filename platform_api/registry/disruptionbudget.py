"""A PodDisruptionBudget's DisruptionAllowed condition, as kube's pdb helpers keep it:
written by the disruption controller and by the eviction API when it spends the last
allowed disruption."""

from __future__ import annotations

from typing import Any

from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
CONDITION = "DisruptionAllowed"


def set_allowed_condition(status: Obj, now: float) -> None:
    """kube's UpdateDisruptionAllowedCondition (meta SetStatusCondition: the transition
    time moves only when the status does)."""
    allowed = status.get("disruptionsAllowed", 0) > 0
    wanted = {
        "type": CONDITION,
        "status": "True" if allowed else "False",
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
    }
    if status.get("observedGeneration"):
        wanted["observedGeneration"] = status["observedGeneration"]
    conditions = status.setdefault("conditions", [])
    for i, found in enumerate(conditions):
        if found.get("type") == CONDITION:
            since = found.get("lastTransitionTime")
            if found.get("status") != wanted["status"] or not since:
                since = format_timestamp(now)
            conditions[i] = {**wanted, "lastTransitionTime": since}
            return
    conditions.append({**wanted, "lastTransitionTime": format_timestamp(now)})
