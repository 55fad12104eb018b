"""A Deployment's status (kube's calculateStatus and syncRolloutStatus): counts summed
over its ReplicaSets, and the Available, Progressing and ReplicaFailure conditions that
``kubectl rollout status`` waits on.  Pure functions: the controller writes.
"""

from __future__ import annotations

from typing import Any

from platform_api.controllers.deploymentutil import max_unavailable, replicas, status_of
from platform_api.timestamps import format_timestamp, parse_timestamp

Obj = dict[str, Any]
NO_LIMIT = 2**31 - 1  # progressDeadlineSeconds, revisionHistoryLimit: "none"
_KEPT = ("terminatingReplicas", "collisionCount")  # pointers: a 0 is written


def condition(status: Obj, type_: str) -> Obj | None:
    for c in status.get("conditions") or ():
        if c.get("type") == type_:
            return c
    return None


def new_condition(type_: str, state: str, reason: str, message: str, now: float) -> Obj:
    stamp = format_timestamp(now)
    return {
        "type": type_,
        "status": state,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def set_condition(status: Obj, new: Obj) -> None:
    """kube's SetDeploymentCondition: a condition with the same status and reason stays
    as it is; one with the same status keeps its transition time."""
    current = condition(status, new["type"])
    if current is not None and (current["status"], current.get("reason")) == (
        new["status"],
        new["reason"],
    ):
        return
    if current is not None and current["status"] == new["status"]:
        new = {**new, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, new["type"])
    status.setdefault("conditions", []).append(new)


def set_progressing(status: Obj, state: str, reason: str, message: str, now: float) -> None:
    set_condition(status, new_condition("Progressing", state, reason, message, now))


def remove_condition(status: Obj, type_: str) -> None:
    kept = [c for c in status.get("conditions") or () if c.get("type") != type_]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def has_deadline(d: Obj) -> bool:
    return d["spec"].get("progressDeadlineSeconds", NO_LIMIT) != NO_LIMIT


def calculate_status(all_rs: list[Obj], new_rs: Obj | None, d: Obj, now: float) -> Obj:
    """kube's calculateStatus: counts summed over the ReplicaSets; Available by the
    unavailability budget; the other conditions carried over."""
    available = sum(status_of(rs, "availableReplicas") for rs in all_rs)
    total = sum(replicas(rs) for rs in all_rs)
    status: Obj = {
        "observedGeneration": d["metadata"].get("generation", 0),
        "replicas": sum(status_of(rs, "replicas") for rs in all_rs),
        "updatedReplicas": status_of(new_rs, "replicas") if new_rs is not None else 0,
        "readyReplicas": sum(status_of(rs, "readyReplicas") for rs in all_rs),
        "availableReplicas": available,
        "unavailableReplicas": max(total - available, 0),
    }
    terminating = _terminating(all_rs)
    if terminating is not None:
        status["terminatingReplicas"] = terminating
    old = d.get("status") or {}
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if available >= replicas(d) - max_unavailable(d):
        set_condition(
            status,
            new_condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                now,
            ),
        )
    else:
        set_condition(
            status,
            new_condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                now,
            ),
        )
    return status


def _terminating(all_rs: list[Obj]) -> int | None:
    total = 0
    for rs in all_rs:
        status = rs.get("status") or {}
        if "terminatingReplicas" not in status:
            if not status.get("observedGeneration"):
                continue  # not yet reported at all
            return None
        total += status["terminatingReplicas"]
    return total


def complete(d: Obj, status: Obj) -> bool:
    want = replicas(d)
    return (
        status.get("updatedReplicas", 0) == want
        and status.get("replicas", 0) == want
        and status.get("availableReplicas", 0) == want
        and status.get("observedGeneration", 0) >= d["metadata"].get("generation", 0)
    )


def progressing(d: Obj, status: Obj) -> bool:
    old = d.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = status.get("replicas", 0) - status.get("updatedReplicas", 0)
    return (
        status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0)
        or new_old < old_old
        or status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
        or status.get("availableReplicas", 0) > old.get("availableReplicas", 0)
    )


def timed_out(d: Obj, status: Obj, now: float) -> bool:
    if not has_deadline(d):
        return False
    current = condition(status, "Progressing")
    if current is None or current.get("reason") == "NewReplicaSetAvailable":
        return False
    if current.get("reason") == "ProgressDeadlineExceeded":
        return True
    since = parse_timestamp(current.get("lastUpdateTime")) or now
    return since + d["spec"]["progressDeadlineSeconds"] < now


def _replica_failures(all_rs: list[Obj], new: Obj | None) -> list[Obj]:
    def of(rs: Obj) -> list[Obj]:
        return [
            {
                "type": "ReplicaFailure",
                "status": c["status"],
                "lastUpdateTime": c.get("lastTransitionTime"),
                "lastTransitionTime": c.get("lastTransitionTime"),
                "reason": c.get("reason"),
                "message": c.get("message"),
            }
            for c in (rs.get("status") or {}).get("conditions") or ()
            if c.get("type") == "ReplicaFailure"
        ]

    first = of(new) if new is not None else []
    return first or [c for rs in all_rs for c in of(rs)]


def normal(status: Obj) -> Obj:
    """Go's omitempty on DeploymentStatus: zero counts are not written."""
    return {k: v for k, v in status.items() if v not in (0, None, []) or k in _KEPT}


def rollout_status(d: Obj, all_rs: list[Obj], new: Obj | None, now: float) -> Obj:
    """kube's syncRolloutStatus: the Progressing condition by what moved since the
    status the Deployment has (complete, progressing, or past its deadline), and the
    ReplicaSets' ReplicaFailure, the new one's first."""
    status = calculate_status(all_rs, new, d, now)
    if not has_deadline(d):
        remove_condition(status, "Progressing")
    current = condition(d.get("status") or {}, "Progressing")
    finished = (
        status["replicas"] == status["updatedReplicas"]
        and current is not None
        and current.get("reason") == "NewReplicaSetAvailable"
    )
    subject = (
        f'ReplicaSet "{new["metadata"]["name"]}"'
        if new
        else f'Deployment "{d["metadata"]["name"]}"'
    )
    if has_deadline(d) and not finished:
        if complete(d, status):
            done = f"{subject} has successfully progressed."
            set_condition(
                status, new_condition("Progressing", "True", "NewReplicaSetAvailable", done, now)
            )
        elif progressing(d, status):
            moving = new_condition(
                "Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing.", now
            )
            if current is not None and current["status"] == "True":
                moving["lastTransitionTime"] = current.get("lastTransitionTime")
            remove_condition(status, "Progressing")
            set_condition(status, moving)
        elif timed_out(d, status, now):
            late = f"{subject} has timed out progressing."
            set_condition(
                status,
                new_condition("Progressing", "False", "ProgressDeadlineExceeded", late, now),
            )
    failures = _replica_failures(all_rs, new)
    if failures:
        set_condition(status, failures[0])
    else:
        remove_condition(status, "ReplicaFailure")
    return status


def deadline_check(d: Obj, status: Obj, now: float) -> float | None:
    """kube's requeueStuckDeployment: seconds until the progress deadline passes (and
    one more), when a rollout is under way; None otherwise."""
    current = condition(d.get("status") or {}, "Progressing")
    if not has_deadline(d) or current is None or complete(d, status):
        return None
    if current.get("reason") == "ProgressDeadlineExceeded":
        return None
    since = parse_timestamp(current.get("lastUpdateTime")) or now
    after: float = since + d["spec"]["progressDeadlineSeconds"] - now
    return max(after, 0.0) + 1.0
