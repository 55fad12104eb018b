"""A Job's pods made and removed (kube's manageJob, deleteJobPods and
deleteActivePods): how many should run, which indexes they take, which go first, and
the per-index failure counts a replacement carries.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import DeferredList, ensureDeferred

from platform_api.controllers import jobindexes as ix
from platform_api.controllers import jobstatus as js
from platform_api.controllers import podcontrol
from platform_api.controllers.jobpolicy import index_remaining, judge
from platform_api.errors import StatusError

if TYPE_CHECKING:
    from platform_api.controllers.job import JobController

Obj = dict[str, Any]
Key = tuple[str, str]


class JobPods:
    def __init__(self, controller: JobController) -> None:
        self.c = controller

    async def manage(self, key: Key, state: js.SyncState) -> tuple[int, Exception | None, float]:
        """kube's manageJob: (active pods after, the first error, seconds to wait)."""
        job, spec = state.job, js.spec_of(state.job)
        active = len(state.active)
        if js.suspended(job):
            victims = self.for_removal(job, state.active, active)
            ready, removed, error = await self.delete(key, job, victims)
            state.terminating += removed
            state.ready -= ready
            return active - removed, error, 0.0
        parallelism = spec.get("parallelism", 1)
        if spec.get("completions") is None:
            want = active if state.succeeded > 0 else parallelism
        else:
            want = max(0, min(spec["completions"] - state.succeeded, parallelism))
        victims = self.for_removal(job, state.active, max(0, active - want))
        if victims:
            victims = victims[: podcontrol.BURST_REPLICAS]
            ready, removed, error = await self.delete(key, job, victims)
            state.terminating += removed
            state.ready -= ready
            return active - removed, error, 0.0
        waiting = state.terminating if js.only_replace_failed(job) else 0
        count = min(want - waiting - active, podcontrol.BURST_REPLICAS)
        if count <= 0:
            return active, None, 0.0
        now = self.c.reactor.seconds()
        indexes: list[int] | None = None
        if not js.per_index(job) and (wait := state.backoff.remaining(now)) > 0:
            return 0, None, wait  # as kube: nothing counted active until the backoff ends
        if js.is_indexed(job):
            indexes = state.pending_indexes(count)
            if js.per_index(job):
                indexes, wait = _ready_indexes(indexes, state.delayed, now)
                if wait > 0:
                    return 0, None, wait
            count = len(indexes)
        made, error = await self.create(key, state, count, indexes)
        return active + made, error, 0.0

    def for_removal(self, job: Obj, pods: list[Obj], at_least: int) -> list[Obj]:
        """Pods to delete: with indexes, duplicates and strays first; then kube's order."""
        now = self.c.reactor.seconds()

        def order(group: list[Obj]) -> list[Obj]:
            return podcontrol.deletion_order(group, {}, now)

        remove: list[Obj] = []
        rest = pods
        if js.is_indexed(job):
            remove, rest = ix.duplicates_for_removal(pods, js.completions(job), order)
        if len(remove) < at_least:
            remove += order(rest)[: at_least - len(remove)]
        return remove

    async def create(
        self, key: Key, state: js.SyncState, count: int, indexes: list[int] | None
    ) -> tuple[int, Exception | None]:
        job = state.job
        self.c.expectations.expect(key, adds=count)
        template = copy.deepcopy(js.spec_of(job)["template"])
        if indexes is not None:
            ix.add_index_env(template.setdefault("spec", {}))
        meta = template.setdefault("metadata", {})
        if js.TRACKING not in (meta.get("finalizers") or []):
            meta["finalizers"] = [*(meta.get("finalizers") or []), js.TRACKING]
        ref = podcontrol.controller_ref(job, js.API_VERSION, js.KIND)
        queue = list(indexes or ())
        namespace = job["metadata"].get("namespace", "")

        async def create_one() -> None:
            one, generate = copy.deepcopy(template), ""
            if indexes is not None:
                index = queue.pop(0)
                one, generate = ix.with_index(one, job["metadata"]["name"], index)
                if js.per_index(job):
                    _carry_failures(one, job, state.delayed.get(index))
            pod = podcontrol.from_template(one, job["metadata"]["name"], ref)
            if generate:
                pod["metadata"]["generateName"] = generate
            await self.c.pod_control.create(namespace, pod, job)

        done, error = await podcontrol.slow_start(count, create_one)
        for _ in range(count - done):
            self.c.expectations.created(key)
        return done, error

    async def delete(
        self, key: Key, job: Obj, pods: list[Obj], *, keep: bool = False
    ) -> tuple[int, int, Exception | None]:
        """Delete (unless ``keep``, after removing the finalizer: kube's deleteJobPods;
        with it, deleteActivePods); (ready ones deleted, deleted, first error)."""
        if not pods:
            return 0, 0, None
        if not keep:
            self.c.expectations.expect(key, deletes={p["metadata"]["name"] for p in pods})

        async def one(pod: Obj) -> bool:
            name = pod["metadata"]["name"]
            try:
                if not keep:
                    await self.c.tracker.remove_finalizer(pod, raise_errors=True)
                if await self.c.pod_control.delete(pod["metadata"].get("namespace", ""), name, job):
                    return True
            except StatusError:
                self.c.expectations.deleted(key, name)
                raise
            self.c.expectations.deleted(key, name)  # gone already: no event will show it
            return True

        results: list[tuple[bool, Any]] = await DeferredList(
            [ensureDeferred(one(p)) for p in pods], consumeErrors=True
        )
        deleted = [p for p, (ok, _) in zip(pods, results, strict=True) if ok]
        errors = [r.value for ok, r in results if not ok]
        ready = sum(1 for p in deleted if podcontrol.is_ready(p))
        return ready, len(deleted), errors[0] if errors else None


def _ready_indexes(indexes: list[int], delayed: dict[int, Obj], now: float) -> tuple[list, float]:
    """Indexes whose per-index backoff is over; else the shortest wait."""
    ready = [i for i in indexes if index_remaining(delayed.get(i), now) == 0]
    if ready:
        return ready, 0.0
    waits = [index_remaining(delayed.get(i), now) for i in indexes]
    return [], min(waits) if waits else 0.0


def _carry_failures(template: Obj, job: Obj, replaced: Obj | None) -> None:
    """The index's failure counts, one more for the pod being replaced (counted or
    ignored as the failure policy says), on the replacement."""
    counted = ignored = 0
    if replaced is not None:
        counted = ix.failure_count(replaced)
        ignored = ix.absolute_failure_count(replaced) - counted
        policy = js.spec_of(job).get("podFailurePolicy")
        if not policy or judge(policy, replaced).counts:
            counted += 1
        else:
            ignored += 1
    annotations = template["metadata"].setdefault("annotations", {})
    annotations[ix.FAILURE_COUNT] = str(counted)
    if ignored > 0:
        annotations[ix.IGNORED_FAILURE_COUNT] = str(ignored)
