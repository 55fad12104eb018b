"""What one sync of a Job knows and decides about its pods and its status (kube's
syncJobCtx and the pure parts of syncJob and trackJobStatusAndRemoveFinalizers).

Pods carry the ``batch.kubernetes.io/job-tracking`` finalizer until the Job has counted
them: a finished pod's UID first goes into ``status.uncountedTerminatedPods``, then its
finalizer is removed, then it moves into ``succeeded``/``failed``.  So a pod that
disappears is never counted twice or lost, whatever the order of events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.controllers import jobindexes as ix
from platform_api.controllers import podcontrol
from platform_api.controllers.base import status_condition
from platform_api.controllers.jobpolicy import Backoff, finished_time, judge
from platform_api.timestamps import format_timestamp

Obj = dict[str, Any]
API_VERSION, KIND = "batch/v1", "Job"
TRACKING = "batch.kubernetes.io/job-tracking"
MAX_UNCOUNTED = 500  # kube's MaxUncountedPods: UIDs recorded in one status write
MAX_INT32 = 2**31 - 1


def has_tracking(pod: Obj) -> bool:
    return TRACKING in (pod["metadata"].get("finalizers") or ())


def spec_of(job: Obj) -> Obj:
    spec: Obj = job.get("spec") or {}
    return spec


def is_indexed(job: Obj) -> bool:
    return spec_of(job).get("completionMode") == "Indexed"


def per_index(job: Obj) -> bool:
    return spec_of(job).get("backoffLimitPerIndex") is not None


def suspended(job: Obj) -> bool:
    return bool(spec_of(job).get("suspend"))


def only_replace_failed(job: Obj) -> bool:
    """Replacements wait until pods have failed, not just begun terminating."""
    spec = spec_of(job)
    return spec.get("podReplacementPolicy") == "Failed" or bool(spec.get("podFailurePolicy"))


def completions(job: Obj) -> int:
    value = spec_of(job).get("completions")
    return MAX_INT32 if value is None else int(value)


def is_failed(pod: Obj, job: Obj) -> bool:
    """Failed, or (unless only failures are replaced) being deleted before it succeeded."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if only_replace_failed(job):
        return False
    return bool(pod["metadata"].get("deletionTimestamp")) and phase != "Succeeded"


def condition_true(job: Obj, type_: str) -> Obj | None:
    found = status_condition(job, type_)
    return found if found is not None and found.get("status") == "True" else None


def new_condition(type_: str, reason: str, message: str, now: float, status: str = "True") -> Obj:
    stamp = format_timestamp(now)
    return {
        "type": type_,
        "status": status,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def ensure_condition(
    job: Obj, type_: str, status: str, reason: str, message: str, now: float
) -> bool:
    """kube's ensureJobConditionStatus: set or change a condition (a False one is only
    ever a change of an existing one); whether anything changed."""
    conditions = job["status"].setdefault("conditions", [])
    for i, found in enumerate(conditions):
        if found.get("type") == type_:
            if (found.get("status"), found.get("reason"), found.get("message")) == (
                status,
                reason,
                message,
            ):
                return False
            conditions[i] = new_condition(type_, reason, message, now, status)
            return True
    if status == "False":
        if not conditions:
            job["status"].pop("conditions")
        return False
    conditions.append(new_condition(type_, reason, message, now, status))
    return True


def restarts_past_limit(job: Obj, pods: list[Obj]) -> bool:
    """With restartPolicy OnFailure, container restarts count against the backoff limit."""
    spec = spec_of(job)
    template = (spec.get("template") or {}).get("spec") or {}
    if template.get("restartPolicy") != "OnFailure":
        return False
    total = 0
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") in ("Running", "Pending"):
            for key in ("initContainerStatuses", "containerStatuses"):
                total += sum(c.get("restartCount", 0) for c in status.get(key) or ())
    limit = spec.get("backoffLimit", 6)
    return total > 0 if limit == 0 else total >= limit


@dataclass
class SyncState:
    """kube's syncJobCtx: one sync's view of a Job (a copy it may change) and its pods."""

    job: Obj
    pods: list[Obj]
    active: list[Obj]
    removing: set[str]  # UIDs whose finalizer removal the watch has not shown yet
    ready: int = 0
    terminating: int = 0
    succeeded: int = 0
    failed: int = 0
    finished: Obj | None = None  # the condition the Job is about to get
    backoff: Backoff = field(default_factory=Backoff)
    prev_succeeded: ix.Indexes = field(default_factory=ix.Indexes)
    succeeded_indexes: ix.Indexes = field(default_factory=ix.Indexes)
    failed_indexes: ix.Indexes | None = None
    delayed: dict[int, Obj] = field(default_factory=dict)  # index -> failed pod kept back

    @property
    def status(self) -> Obj:
        status: Obj = self.job["status"]
        return status

    def uncounted(self, kind: str) -> list[str]:
        lists: Obj = self.status.setdefault("uncountedTerminatedPods", {})
        found: list[str] = lists.setdefault(kind, [])
        return found

    def counts(self, pod: Obj) -> bool:
        """Tracked here still: has the finalizer, is not on its way out of it and, for an
        Indexed Job, runs a valid index."""
        uid = pod["metadata"].get("uid", "")
        if not has_tracking(pod) or uid in self.removing:
            return False
        if is_indexed(self.job):
            index = ix.completion_index(pod)
            return index is not None and index < completions(self.job)
        return True

    def new_finished(self) -> tuple[list[Obj], list[Obj]]:
        """Pods that finished and are not counted anywhere yet (kube's getNewFinishedPods)."""
        done_ok, done_bad = set(self.uncounted("succeeded")), set(self.uncounted("failed"))
        succeeded = [
            p
            for p in self.pods
            if self.counts(p)
            and p["metadata"].get("uid") not in done_ok
            and (p.get("status") or {}).get("phase") == "Succeeded"
        ]
        failed = [
            p
            for p in self.pods
            if self.counts(p)
            and p["metadata"].get("uid") not in done_bad
            and is_failed(p, self.job)
        ]
        return succeeded, failed

    def fail_job_message(self) -> str | None:
        """A failed pod matching a FailJob rule of the pod failure policy."""
        policy = spec_of(self.job).get("podFailurePolicy")
        if not policy:
            return None
        for pod in self.pods:
            if is_failed(pod, self.job):
                verdict = judge(policy, pod)
                if verdict.message is not None:
                    return verdict.message
        return None

    def index_sets(self) -> None:
        """Succeeded (and with per-index limits, failed) indexes, old and new."""
        job, total = self.job, completions(self.job)
        self.prev_succeeded = ix.Indexes.parse(self.status.get("completedIndexes"), total)
        fresh = [
            i
            for p in self.pods
            if (p.get("status") or {}).get("phase") == "Succeeded"
            and has_tracking(p)
            and (i := ix.completion_index(p)) is not None
            and i < total
        ]
        self.succeeded_indexes = self.prev_succeeded.with_indexes(fresh)
        self.succeeded = self.succeeded_indexes.total()
        if not per_index(job):
            return
        before = ix.Indexes.parse(self.status.get("failedIndexes"), total)
        failed = [
            i
            for p in self.pods
            if has_tracking(p)
            and (i := ix.completion_index(p)) is not None
            and i < total
            and self._index_failed(p)
        ]
        self.failed_indexes = before.with_indexes(failed)
        self.delayed = self._delayed_per_index()

    def _index_failed(self, pod: Obj) -> bool:
        if not is_failed(pod, self.job):
            return False
        policy = spec_of(self.job).get("podFailurePolicy")
        counted = True
        if policy:
            verdict = judge(policy, pod)
            if verdict.action == "FailIndex":
                return True
            counted = verdict.counts
        limit = spec_of(self.job).get("backoffLimitPerIndex") or 0
        return counted and ix.failure_count(pod) >= limit

    def _delayed_per_index(self) -> dict[int, Obj]:
        """The latest failed pod of each index still to be replaced: its finalizer stays
        until the replacement carries its failure count (kube's podsWithDelayedDeletion)."""
        active = set(ix.indexes_of(self.active))
        out: dict[int, Obj] = {}
        for pod in self.pods:
            if not self.counts(pod) or not is_failed(pod, self.job):
                continue
            index = ix.completion_index(pod)
            assert index is not None
            failed = self.failed_indexes
            if self.succeeded_indexes.has(index) or (failed and failed.has(index)):
                continue
            if index in active:
                continue
            last = out.get(index)
            if last is None or (
                ix.absolute_failure_count(last) <= ix.absolute_failure_count(pod)
                and finished_time(pod) >= finished_time(last)
            ):
                out[index] = pod
        return out

    def pending_indexes(self, count: int) -> list[int]:
        taken = self.succeeded_indexes.with_indexes(ix.indexes_of(self.active))
        if only_replace_failed(self.job):
            taken = taken.with_indexes(
                ix.indexes_of([p for p in self.pods if podcontrol.is_terminating(p)])
            )
        if self.failed_indexes is not None:
            taken = taken.merge(self.failed_indexes)
        return ix.first_pending(count, completions(self.job), taken)


def clean_uncounted(status: Obj, with_finalizer: set[str]) -> bool:
    """UIDs whose finalizer is gone move from uncountedTerminatedPods into the counters
    (kube's cleanUncountedPodsWithoutFinalizers); whether anything moved."""
    lists = status.setdefault("uncountedTerminatedPods", {})
    changed = False
    for kind in ("succeeded", "failed"):
        uids = lists.get(kind) or []
        kept = [u for u in uids if u in with_finalizer]
        if len(kept) != len(uids):
            changed = True
            status[kind] = status.get(kind, 0) + len(uids) - len(kept)
            lists[kind] = kept
    return changed


def written_status(status: Obj) -> Obj:
    """The status as Go writes it: zero counters and empty lists left out; ``ready``,
    ``terminating`` and ``uncountedTerminatedPods`` (pointers) kept."""
    out = {k: v for k, v in status.items() if v not in (0, None, "", [])}
    for key in ("ready", "terminating"):
        if status.get(key) is not None:
            out[key] = status[key]
    lists = status.get("uncountedTerminatedPods")
    if lists is not None:
        out["uncountedTerminatedPods"] = {k: v for k, v in lists.items() if v}
    return out
