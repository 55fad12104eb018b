"""The Job's status written from its finished pods, and their tracking finalizers
removed, in kube's order (trackJobStatusAndRemoveFinalizers): UIDs into
``uncountedTerminatedPods`` and the interim condition first, then finalizers, then the
counters and, once nothing is uncounted or terminating, Complete or Failed.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import DeferredList, ensureDeferred

from platform_api.controllers import jobindexes as ix
from platform_api.controllers import jobstatus as js
from platform_api.controllers.jobpolicy import judge
from platform_api.errors import StatusError

if TYPE_CHECKING:
    from platform_api.controllers.job import JobController

Obj = dict[str, Any]
Key = tuple[str, str]


class StatusTracker:
    def __init__(self, controller: JobController) -> None:
        self.c = controller

    async def track(self, key: Key, state: js.SyncState, flush: bool) -> None:
        job, status = state.job, state.status
        indexed, total = js.is_indexed(job), js.completions(job)
        pods = state.pods
        if indexed:
            pods = sorted(pods, key=_index_or_minus_one)
        with_finalizer = {
            p["metadata"]["uid"]
            for p in pods
            if js.has_tracking(p) and p["metadata"]["uid"] not in state.removing
        }
        flush = js.clean_uncounted(status, with_finalizer) or flush
        finished_ok, finished_bad = state.uncounted("succeeded"), state.uncounted("failed")
        was_ok, was_bad = set(finished_ok), set(finished_bad)
        to_remove: list[Obj] = []
        new_indexes: list[int] = []
        full = False
        policy = js.spec_of(job).get("podFailurePolicy")
        for pod in pods:
            uid = pod["metadata"]["uid"]
            if not js.has_tracking(pod) or uid in state.removing:
                continue
            failed = js.is_failed(pod, job)
            if not self._may_remove(state, pod, failed):
                continue
            to_remove.append(pod)
            index = ix.completion_index(pod)
            if (pod.get("status") or {}).get("phase") == "Succeeded" and uid not in was_bad:
                if indexed:
                    if index is not None and index < total and not state.prev_succeeded.has(index):
                        new_indexes.append(index)
                        flush = True
                elif uid not in was_ok:
                    finished_ok.append(uid)
                    flush = True
            elif failed or (
                state.finished is not None and state.finished["type"] != "SuccessCriteriaMet"
            ):
                valid = not indexed or (index is not None and index < total)
                if uid not in was_bad and valid and (not policy or judge(policy, pod).counts):
                    finished_bad.append(uid)
                    flush = True
            if len(new_indexes) + len(finished_ok) + len(finished_bad) >= js.MAX_UNCOUNTED:
                full = True  # the rest next time: a status write stays small
                break
        if indexed:
            flush = self._indexes(state, new_indexes) or flush
        flush = self._interim_condition(state) or flush
        flush = await self._flush_and_remove(key, state, to_remove, with_finalizer, flush)
        finished = not full and self._enact(state)
        if finished or flush:
            await self.write(state.job)
            if finished:
                self._record_finished(state)

    def _may_remove(self, state: js.SyncState, pod: Obj, failed: bool) -> bool:
        """kube's canRemoveFinalizer."""
        if state.job["metadata"].get("deletionTimestamp") or state.finished is not None:
            return True
        if (pod.get("status") or {}).get("phase") == "Succeeded":
            return True
        if not failed:
            return False
        if js.per_index(state.job):
            index = ix.completion_index(pod)
            held = state.delayed.get(index) if index is not None else None
            if held is not None and held["metadata"]["uid"] == pod["metadata"]["uid"]:
                return False  # the replacement takes over its failure count first
        return True

    def _indexes(self, state: js.SyncState, new_indexes: list[int]) -> bool:
        status = state.status
        state.succeeded_indexes = state.succeeded_indexes.with_indexes(new_indexes)
        completed = str(state.succeeded_indexes)
        changed = completed != status.get("completedIndexes", "")
        status["succeeded"] = state.succeeded_indexes.total()
        status["completedIndexes"] = completed
        failed = str(state.failed_indexes) if state.failed_indexes is not None else None
        if failed != status.get("failedIndexes"):
            status["failedIndexes"] = failed
            changed = True
        return changed

    def _interim_condition(self, state: js.SyncState) -> bool:
        """FailureTarget or SuccessCriteriaMet goes into the status now; the terminal
        condition it leads to waits for the pods (kube's delayed terminal condition)."""
        finished, now = state.finished, self.c.reactor.seconds()
        if finished is None:
            return False
        reason, message = finished.get("reason", ""), finished.get("message", "")
        conditions = state.status.setdefault("conditions", [])
        if finished["type"] == "FailureTarget":
            conditions.append(finished)
            state.finished = js.new_condition("Failed", reason, message, now)
            return True
        if finished["type"] == "SuccessCriteriaMet":
            added = js.condition_true(state.job, "SuccessCriteriaMet") is None
            if added:
                conditions.append(finished)
            state.finished = js.new_condition("Complete", reason, message, now)
            return added
        return False

    async def _flush_and_remove(
        self,
        key: Key,
        state: js.SyncState,
        to_remove: list[Obj],
        with_finalizer: set[str],
        flush: bool,
    ) -> bool:
        """kube's flushUncountedAndRemoveFinalizers: whether a write is still owed."""
        if flush:
            written = await self.write(state.job)
            state.job["metadata"] = written["metadata"]
            self.c.backoffs[key] = state.backoff
            flush = False
        removing = self.c.removing.setdefault(key, set())
        removing.update(p["metadata"]["uid"] for p in to_remove)
        results: list[tuple[bool, Any]] = await DeferredList(
            [ensureDeferred(self.remove_finalizer(p, raise_errors=True)) for p in to_remove],
            consumeErrors=True,
        )
        error: Exception | None = None
        for pod, (ok, result) in zip(to_remove, results, strict=True):
            if ok:
                with_finalizer.discard(pod["metadata"]["uid"])
            else:
                removing.discard(pod["metadata"]["uid"])
                error = error or result.value
        if js.clean_uncounted(state.status, with_finalizer):
            flush = True
        if error is not None:
            if flush:
                await self.write(state.job)
            raise error
        return flush

    def _enact(self, state: js.SyncState) -> bool:
        """kube's enactJobFinished: the terminal condition, once no pod is left uncounted
        or terminating."""
        finished = state.finished
        if finished is None:
            return False
        lists = state.status.get("uncountedTerminatedPods") or {}
        if lists.get("succeeded") or lists.get("failed") or state.terminating > 0:
            return False
        now = self.c.reactor.seconds()
        reason, message = finished.get("reason", ""), finished.get("message", "")
        js.ensure_condition(state.job, finished["type"], "True", reason, message, now)
        if finished["type"] == "Complete":
            state.status["completionTime"] = finished["lastTransitionTime"]
        return True

    def _record_finished(self, state: js.SyncState) -> None:
        job, finished = state.job, state.finished
        assert finished is not None
        if finished["type"] == "Complete":
            want = js.spec_of(job).get("completions")
            if want is not None and state.status.get("succeeded", 0) > want:
                message = "Too many succeeded pods running after completion count reached"
                self.c.record_event(job, "Warning", "TooManySucceededPods", message)
            self.c.record_event(job, "Normal", "Completed", "Job completed")
        else:
            reason, message = finished.get("reason", ""), finished.get("message", "")
            self.c.record_event(job, "Warning", reason, message)

    async def write(self, job: Obj) -> Obj:
        """The status subresource, as the sync computed it from the Job it read: kube's
        UpdateStatus carries that resourceVersion, so a Job changed meanwhile (a client
        wrote its status) is a conflict and the sync runs again on the new one."""
        meta, status = job["metadata"], js.written_status(job["status"])

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("resourceVersion") != meta.get("resourceVersion"):
                name = meta["name"]
                message = (
                    f'Operation cannot be fulfilled on jobs.batch "{name}": the object has '
                    "been modified; please apply your changes to the latest version and try again"
                )
                raise StatusError(409, "Conflict", message)
            existing["status"] = copy.deepcopy(status)
            return existing

        stored, _ = await self.c.jobs.update(
            meta.get("namespace", ""), meta["name"], change, subresource="status"
        )
        return stored.copy()  # the sync goes on editing it

    async def remove_finalizer(self, pod: Obj, *, raise_errors: bool = False) -> None:
        """The tracking finalizer off the pod (gone already: done)."""
        meta = pod["metadata"]

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            kept = [f for f in existing["metadata"].get("finalizers") or () if f != js.TRACKING]
            existing["metadata"]["finalizers"] = kept
            return existing

        try:
            await self.c.pods.update(meta.get("namespace", ""), meta["name"], change)
        except StatusError as e:
            if e.code != 404 and raise_errors:
                raise


def _index_or_minus_one(pod: Obj) -> int:
    index = ix.completion_index(pod)
    return -1 if index is None else index
