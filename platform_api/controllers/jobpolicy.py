"""How a Job judges its pods (kube's pod_failure_policy, success_policy and
backoff_utils): which failures count, which fail the Job or an index at once, when an
Indexed Job has succeeded early, and how long to wait before replacing failed pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.controllers.jobindexes import Indexes, absolute_failure_count
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
POD_FAILURE_BACKOFF = 10.0  # kube's DefaultJobPodFailureBackOff
MAX_POD_FAILURE_BACKOFF = 600.0  # MaxJobPodFailureBackOff


@dataclass(frozen=True)
class Verdict:
    """What a failure policy says of a failed pod: ``message`` to fail the Job with
    (FailJob), whether the failure counts, and the action matched (None: no rule)."""

    message: str | None = None
    counts: bool = True
    action: str | None = None


def judge(policy: Obj | None, pod: Obj) -> Verdict:
    """kube's matchPodFailurePolicy: the first rule that matches decides."""
    if not policy:
        return Verdict()
    meta, status = pod["metadata"], pod.get("status") or {}
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            container = _exit_code_match(status, rule["onExitCodes"])
            if container is None:
                continue
            code = container["state"]["terminated"].get("exitCode", 0)
            message = (
                f"Container {container.get('name', '')} for pod {where} failed with exit code "
                f"{code} matching {action} rule at index {index}"
            )
        elif rule.get("onPodConditions") is not None:
            condition = _condition_match(status, rule["onPodConditions"])
            if condition is None:
                continue
            message = (
                f"Pod {where} has condition {condition.get('type')} matching {action} rule "
                f"at index {index}"
            )
        else:
            continue
        if action == "Ignore":
            return Verdict(None, False, action)
        if action in ("FailIndex", "Count"):
            return Verdict(None, True, action)
        if action == "FailJob":
            return Verdict(message, True, action)
    return Verdict()


def _exit_code_match(status: Obj, requirement: Obj) -> Obj | None:
    for key in ("containerStatuses", "initContainerStatuses"):
        for container in status.get(key) or ():
            terminated = (container.get("state") or {}).get("terminated")
            if terminated is None:
                continue
            name = requirement.get("containerName")
            code = terminated.get("exitCode", 0)
            if (name is None or name == container.get("name")) and code != 0:
                values = requirement.get("values") or []
                operator = requirement.get("operator")
                if (operator == "In" and code in values) or (
                    operator == "NotIn" and code not in values
                ):
                    return dict(container)
    return None


def _condition_match(status: Obj, patterns: list[Obj]) -> Obj | None:
    for condition in status.get("conditions") or ():
        for pattern in patterns:
            if condition.get("type") == pattern.get("type") and condition.get(
                "status"
            ) == pattern.get("status", "True"):
                return dict(condition)
    return None


def success_policy_met(policy: Obj | None, completions: int, succeeded: Indexes) -> str | None:
    """kube's matchSuccessPolicy: the message of the first rule met, or None."""
    if not policy or not succeeded.intervals:
        return None
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = Indexes.parse(rule["succeededIndexes"], completions)
            if not required.intervals:
                continue
            covered = sum(
                max(0, min(last, b_last) - max(first, b_first) + 1)
                for first, last in required.intervals
                for b_first, b_last in succeeded.intervals
            )
            if covered == required.total() or (count is not None and covered >= count):
                return f"Matched rules at index {index}"
        elif count is not None and succeeded.total() >= count:
            return f"Matched rules at index {index}"
    return None


def finished_time(pod: Obj) -> float:
    """kube's getFinishedTime: the last container's end, else when Ready turned False,
    else the deletion time less the grace period, else creation."""
    status, meta = pod.get("status") or {}, pod["metadata"]
    ends: list[float] = []
    sidecars = {
        c.get("name")
        for c in (pod.get("spec") or {}).get("initContainers") or ()
        if c.get("restartPolicy") == "Always"
    }
    statuses = list(status.get("containerStatuses") or ()) + [
        c for c in status.get("initContainerStatuses") or () if c.get("name") in sidecars
    ]
    for container in statuses:
        terminated = (container.get("state") or {}).get("terminated") or {}
        end = parse_timestamp(terminated.get("finishedAt"))
        if end is None:
            ends = []
            break
        ends.append(end)
    if ends:
        return max(ends)
    for condition in status.get("conditions") or ():
        if condition.get("type") == "Ready" and condition.get("status") == "False":
            since = parse_timestamp(condition.get("lastTransitionTime"))
            if since is not None:
                return since
    deleted = parse_timestamp(meta.get("deletionTimestamp"))
    if deleted is not None:
        return deleted - (meta.get("deletionGracePeriodSeconds") or 0)
    return parse_timestamp(meta.get("creationTimestamp")) or 0.0


@dataclass
class Backoff:
    """kube's backoffRecord: failures since the last success, and the last one's time."""

    failures: int = 0
    last_failure: float | None = None

    def after(self, succeeded: list[Obj], failed: list[Obj]) -> Backoff:
        """The record once newly finished pods are counted (kube's newBackoffRecord)."""
        if not succeeded:
            if not failed:
                return Backoff(self.failures, self.last_failure)
            return Backoff(self.failures + len(failed), max(finished_time(p) for p in failed))
        last_success = max(finished_time(p) for p in succeeded)
        later = sorted(t for p in failed if (t := finished_time(p)) > last_success)
        return Backoff(len(later), later[-1] if later else None)

    def remaining(self, now: float) -> float:
        return remaining(self.failures, self.last_failure, now)


def remaining(failures: int, last_failure: float | None, now: float) -> float:
    """Seconds still to wait: 10 s doubled per further failure, at most 10 minutes."""
    if failures == 0 or last_failure is None:
        return 0.0
    delay = min(POD_FAILURE_BACKOFF * 2 ** (failures - 1), MAX_POD_FAILURE_BACKOFF)
    return max(0.0, delay - (now - last_failure))


def index_remaining(last_failed: Obj | None, now: float) -> float:
    """Per-index backoff before replacing ``last_failed`` (kube's getRemainingTimePerIndex)."""
    if last_failed is None:
        return 0.0
    return remaining(absolute_failure_count(last_failed) + 1, finished_time(last_failed), now)
