"""job-controller (kube's Job controller): pods for a Job until enough succeed, or it
fails; ``status`` counts them.

Parallelism and completions (NonIndexed: any pod's success counts; Indexed: one success
per index 0..completions-1, each pod told its index), the backoff limit (global, or per
index with maxFailedIndexes), a pod failure policy (FailJob, FailIndex, Ignore, Count),
a success policy, activeDeadlineSeconds, suspend and resume, podReplacementPolicy, and a
growing delay (10 s doubling to 10 min) before failed pods are replaced.  A finishing Job
first gets FailureTarget or SuccessCriteriaMet, then, once no pod is left running or
uncounted, Failed or Complete.  Pods are made through the API (admission applies) with
the tracking finalizer (jobstatus.py); a Job managed by another controller
(``spec.managedBy``) is left alone.  Pod changes reach a sync after kube's one-second
batching.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.controllers import jobstatus as js
from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.controllers.jobpods import JobPods
from platform_api.controllers.jobpolicy import Backoff, judge, success_policy_met
from platform_api.controllers.jobtrack import StatusTracker
from platform_api.controllers.ttlafterfinished import finished_condition
from platform_api.errors import StatusError
from platform_api.registry.store import Store, resource_prefix
from platform_api.storage.interface import Event
from platform_api.timers import timer_clock
from platform_api.timestamps import format_timestamp, parse_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]
API_VERSION, KIND = js.API_VERSION, js.KIND
COMPONENT = "job-controller"
OWN_NAME = "kubernetes.io/job-controller"  # spec.managedBy of Jobs this controller runs
BATCH = 1.0  # kube's syncJobBatchPeriod: pod changes within a second make one sync
API_BACKOFF, MAX_API_BACKOFF = 1.0, 60.0


class JobController(Controller):
    name = COMPONENT

    def __init__(self, jobs: Store, pods: Store, events: Store, *args: Any) -> None:
        super().__init__(*args)
        self.jobs, self.pods = jobs, pods  # pods through the API
        self.job_index, self.pod_index = ByNamespace(jobs), ByNamespace(pods, owners=True)
        self.job_prefix = resource_prefix(jobs.resource)
        self.pod_prefix = resource_prefix(pods.resource)
        self.events = EventRecorder(events, COMPONENT, self.reactor)
        self.pod_control = podcontrol.PodControl(pods, self.record_event)
        self.expectations = podcontrol.Expectations(timer_clock(self.reactor))
        self.claims = podcontrol.Claims(jobs, pods, API_VERSION, KIND, js.TRACKING)
        self.tracker = StatusTracker(self)
        self.pods_of = JobPods(self)
        self.removing: dict[Key, set[str]] = {}  # pod UIDs whose finalizer removal is unseen
        self.backoffs: dict[Key, Backoff] = {}
        self._failures: dict[Any, int] = {}

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        self.pod_index.load()
        for job in self.job_index.load():
            self.enqueue(_key(job))
        for namespace in list(self.pod_index.objects):
            for pod in self.pod_index.in_namespace(namespace):
                if js.has_tracking(pod) and self._job_of(pod) is None:
                    self.enqueue(_orphan(pod))

    def watched(self) -> tuple[bytes, ...]:
        return (self.job_prefix, self.pod_prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.job_prefix):
            old, new = self.job_index.apply(event)
            if old is not None or new is not None:
                self._job_changed(old, new)
        elif event.key.startswith(self.pod_prefix):
            old, new = self.pod_index.apply(event)
            if old is not None or new is not None:
                self._pod_changed(old, new)

    def _job_changed(self, old: Obj | None, new: Obj | None) -> None:
        job = new or old
        assert job is not None
        key = _key(job)
        if new is None or finished_condition(new) is not None:
            if new is None:
                self.backoffs.pop(key, None)
            for pod in self._owned(job):
                if js.has_tracking(pod):
                    self.enqueue(_orphan(pod))  # the finalizer goes now
        self.enqueue(key)

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        """kube's addPod/updatePod/deletePod."""
        pod = new or old
        assert pod is not None
        if new is None or new["metadata"].get("deletionTimestamp"):
            self._pod_going(pod, final=new is None)
            return
        for before in (old,) if old is not None else ():
            job = self._job_of(before)
            if job is not None and podcontrol.controller_of(before) != podcontrol.controller_of(
                new
            ):
                self._saw_finalizer(job, new)
                self.enqueue(_key(job), BATCH)
        job = self._job_of(new)
        if job is not None:
            if old is None:
                self.expectations.created(_key(job))
            self._saw_finalizer(job, new)
            self.enqueue(_key(job), BATCH)
            return
        if js.has_tracking(new):
            self.enqueue(_orphan(new))
        if podcontrol.controller_of(new) is None:
            for candidate in self.job_index.in_namespace(new["metadata"].get("namespace", "")):
                if podcontrol.matches(podcontrol.spec_selector(candidate), new):
                    self.enqueue(_key(candidate), BATCH)

    def _pod_going(self, pod: Obj, *, final: bool) -> None:
        tracked = js.has_tracking(pod)
        job = self._job_of(pod)
        if job is None or finished_condition(job) is not None:
            if tracked:
                self.enqueue(_orphan(pod))
            return
        key = _key(job)
        self.expectations.deleted(key, pod["metadata"]["name"])
        if final or not tracked:
            self.removing.get(key, set()).discard(pod["metadata"].get("uid", ""))
        self.enqueue(key, BATCH)

    def _saw_finalizer(self, job: Obj, pod: Obj) -> None:
        if not js.has_tracking(pod):
            self.removing.get(_key(job), set()).discard(pod["metadata"].get("uid", ""))

    def _job_of(self, pod: Obj) -> Obj | None:
        """The Job that controls the pod (kube's resolveControllerRef)."""
        return podcontrol.resolve(self.job_index, pod, KIND, API_VERSION)

    def _owned(self, job: Obj) -> list[Obj]:
        uid = job["metadata"].get("uid")
        return [
            p
            for p in self.pod_index.in_namespace(job["metadata"].get("namespace", ""))
            if (ref := podcontrol.controller_of(p)) is not None and ref.get("uid") == uid
        ]

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Any) -> float | None:
        try:
            if len(key) == 3:
                await self._sync_orphan(key[1], key[2])
                retry = None
            else:
                retry = await self._sync_job(key)
        except StatusError:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            return min(API_BACKOFF * 2 ** (failures - 1), MAX_API_BACKOFF)
        self._failures.pop(key, None)
        return retry

    async def _sync_orphan(self, namespace: str, name: str) -> None:
        """kube's handleSingleOrphanPod: a pod whose Job is gone or finished loses the
        tracking finalizer (else it could never be deleted)."""
        pod = self.pod_index.objects.get(namespace, {}).get(name)
        if pod is None or not js.has_tracking(pod):
            return
        ref = podcontrol.controller_of(pod)
        if ref is not None:
            if ref.get("kind") != KIND or ref.get("apiVersion") != API_VERSION:
                return
            job = self._job_of(pod)
            if job is not None and (_managed_elsewhere(job) or finished_condition(job) is None):
                return
        await self.tracker.remove_finalizer(pod, raise_errors=True)

    async def _sync_job(self, key: Key) -> float | None:
        namespace, name = key
        shared = current_object(self.jobs, namespace, name)
        if shared is None:
            self.expectations.forget(key)
            self.removing.pop(key, None)
            self.backoffs.pop(key, None)
            return None
        if _managed_elsewhere(shared):
            return None
        if finished_condition(shared) is not None:
            self.backoffs.pop(key, None)
            return None
        mode = js.spec_of(shared).get("completionMode")
        if mode not in (None, "NonIndexed", "Indexed"):
            message = "Skipped Job sync because completion mode is unknown"
            self.record_event(shared, "Warning", "UnknownCompletionMode", message)
            return None
        job = copy.deepcopy(shared)
        job.setdefault("status", {}).setdefault("uncountedTerminatedPods", {})
        satisfied = self.expectations.satisfied(key)
        state = await self._state(key, job)
        return await self._decide(key, state, satisfied)

    async def _state(self, key: Key, job: Obj) -> js.SyncState:
        pods = await self._claim(job)
        active = [p for p in pods if podcontrol.is_active(p)]
        state = js.SyncState(job, pods, active, set(self.removing.get(key, ())))
        state.ready = sum(1 for p in active if podcontrol.is_ready(p))
        state.terminating = sum(1 for p in pods if podcontrol.is_terminating(p))
        status = state.status
        new_succeeded, new_failed = state.new_finished()
        policy = js.spec_of(job).get("podFailurePolicy")
        counted_failures = sum(1 for p in new_failed if judge(policy, p).counts)
        state.succeeded = (
            status.get("succeeded", 0) + len(new_succeeded) + len(state.uncounted("succeeded"))
        )
        state.failed = status.get("failed", 0) + counted_failures + len(state.uncounted("failed"))
        if status.get("startTime") is None and not js.suspended(job):
            status["startTime"] = format_timestamp(self.reactor.seconds())
        state.backoff = self.backoffs.get(key, Backoff()).after(new_succeeded, new_failed)
        return state

    async def _claim(self, job: Obj) -> list[Obj]:
        """Its pods and matching orphans, claimed (adopted ones get the finalizer)."""
        uid = job["metadata"]["uid"]
        mine = self.pod_index.candidates(job["metadata"].get("namespace", ""), uid)
        return await self.claims.claim(job, podcontrol.spec_selector(job), mine)

    async def _decide(self, key: Key, state: js.SyncState, satisfied: bool) -> float | None:
        """kube's syncJob from its pods' count on: finished or not, pods made or removed."""
        job, now = state.job, self.reactor.seconds()
        spec = js.spec_of(job)
        retry = self._finish_check(state, now)
        if js.is_indexed(job):
            state.index_sets()
            if state.finished is None:
                state.finished = self._index_verdict(state, now)
        active = len(state.active)
        suspend_changed = False
        error: Exception | None = None
        if state.finished is not None:
            ready, deleted, error = await self.pods_of.delete(key, job, state.active, keep=True)
            if deleted != active or not satisfied:
                state.finished = None  # pods or finalizers still to be seen
            active -= deleted
            state.terminating += deleted
            state.ready -= ready
        else:
            managed = satisfied and not job["metadata"].get("deletionTimestamp")
            if managed:
                active, error, wait = await self.pods_of.manage(key, state)
                retry = _sooner(retry, wait)
            want = spec.get("completions")
            done = state.succeeded > 0 if want is None else state.succeeded >= want
            if done and active == 0:
                message = "Reached expected number of succeeded pods"
                state.finished = js.new_condition(
                    "SuccessCriteriaMet", "CompletionsReached", message, now
                )
            elif managed:
                suspend_changed = self._suspension(state, now)
        status = state.status
        changed = suspend_changed or (status.get("active", 0), status.get("ready")) != (
            active,
            state.ready,
        )
        changed = changed or status.get("terminating") != state.terminating
        status.update(active=active, ready=state.ready, terminating=state.terminating)
        await self.tracker.track(key, state, changed)
        if error is not None:
            raise error
        return retry

    def _finish_check(self, state: js.SyncState, now: float) -> float | None:
        """The finished condition the Job already earned, or a failure it meets now;
        with a deadline still ahead, when to look again."""
        job = state.job
        spec, status = js.spec_of(job), state.status
        state.finished = js.condition_true(job, "SuccessCriteriaMet")
        if state.finished is None:
            target = js.condition_true(job, "FailureTarget")
            if target is not None:
                reason, message = target.get("reason", ""), target.get("message", "")
                state.finished = js.new_condition("Failed", reason, message, now)
            elif (message := state.fail_job_message()) is not None:
                state.finished = js.new_condition("FailureTarget", "PodFailurePolicy", message, now)
        if state.finished is not None:
            return None
        started = parse_timestamp(status.get("startTime"))
        deadline = spec.get("activeDeadlineSeconds")
        if state.failed > spec.get("backoffLimit", 6) or js.restarts_past_limit(job, state.pods):
            message = "Job has reached the specified backoff limit"
            state.finished = js.new_condition("FailureTarget", "BackoffLimitExceeded", message, now)
        elif deadline is not None and started is not None and not js.suspended(job):
            if now - started >= deadline:
                message = "Job was active longer than specified deadline"
                state.finished = js.new_condition("FailureTarget", "DeadlineExceeded", message, now)
            else:
                return deadline - (now - started)
        return None

    def _index_verdict(self, state: js.SyncState, now: float) -> Obj | None:
        """Per-index failure limits, then the success policy."""
        spec, failed = js.spec_of(state.job), state.failed_indexes
        if failed is not None:
            most = spec.get("maxFailedIndexes")
            if most is not None and failed.total() > most:
                message = "Job has exceeded the specified maximal number of failed indexes"
                return js.new_condition("FailureTarget", "MaxFailedIndexesExceeded", message, now)
            done = failed.total() + state.succeeded_indexes.total()
            if failed.total() > 0 and done >= js.completions(state.job):
                message = "Job has failed indexes"
                return js.new_condition("FailureTarget", "FailedIndexes", message, now)
        met = success_policy_met(
            spec.get("successPolicy"), js.completions(state.job), state.succeeded_indexes
        )
        if met is not None:
            return js.new_condition("SuccessCriteriaMet", "SuccessPolicy", met, now)
        return None

    def _suspension(self, state: js.SyncState, now: float) -> bool:
        """The Suspended condition follows spec.suspend; resuming restarts the clock of
        activeDeadlineSeconds, suspending clears it."""
        job, status = state.job, state.status
        if js.suspended(job):
            changed = js.ensure_condition(
                job, "Suspended", "True", "JobSuspended", "Job suspended", now
            )
            if changed:
                self.record_event(job, "Normal", "Suspended", "Job suspended")
                status.pop("startTime", None)
            return changed
        changed = js.ensure_condition(job, "Suspended", "False", "JobResumed", "Job resumed", now)
        if changed:
            self.record_event(job, "Normal", "Resumed", "Job resumed")
            status["startTime"] = format_timestamp(now)
        return changed

    def record_event(self, job: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(job, API_VERSION, KIND, type_, reason, message)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _orphan(pod: Obj) -> tuple[str, str, str]:
    meta = pod["metadata"]
    return "orphan", meta.get("namespace", ""), meta["name"]


def _managed_elsewhere(job: Obj) -> bool:
    managed_by = js.spec_of(job).get("managedBy")
    return managed_by is not None and managed_by != OWN_NAME


def _sooner(a: float | None, b: float) -> float | None:
    if b <= 0:
        return a
    return b if a is None else min(a, b)
