"""kube's ttl-after-finished-controller: finished Jobs with a TTL go away.

A Job with ``spec.ttlSecondsAfterFinished`` whose Complete or Failed condition is True is
deleted that many seconds after the condition's ``lastTransitionTime``: in the
foreground (its Pods first, by the garbage collector) and only if it is still the same
Job (UID precondition), as kube does.  Until then its key waits on a timer.
"""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.controllers.timed import TimedController
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions, Preconditions
from platform_api.timestamps import parse_timestamp

log = Logger()
Obj = dict[str, Any]


def needs_cleanup(job: Obj) -> bool:
    """A TTL is set and the Job is finished (kube's ``IsJobFinished``)."""
    if (job.get("spec") or {}).get("ttlSecondsAfterFinished") is None:
        return False
    return finished_condition(job) is not None


def finished_condition(job: Obj) -> Obj | None:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return dict(condition)
    return None


def expires_at(job: Obj) -> float | None:
    """When the TTL runs out (epoch seconds), or None when the finish time is unknown."""
    condition = finished_condition(job)
    finished = parse_timestamp((condition or {}).get("lastTransitionTime") or "")
    if finished is None:
        return None
    return finished + int(job["spec"]["ttlSecondsAfterFinished"])


class TTLAfterFinished(TimedController):
    """Keys are (namespace, name) of Jobs."""

    name = "ttl-after-finished-controller"

    def __init__(self, jobs: Store, *args: Any) -> None:
        super().__init__(*args)
        self.jobs = jobs

    def resync(self) -> None:
        for stored in self.jobs.list("", ListOptions()).items:
            self._consider(stored.object)

    def watched(self) -> tuple[bytes, ...]:
        return (self.jobs.prefix,)

    def observe(self, event: Event) -> None:
        stored = event.stored
        if event.type != DELETED and stored is not None and event.key.startswith(self.jobs.prefix):
            self._consider(stored.object)

    def _consider(self, job: Obj) -> None:
        meta = job.get("metadata", {})
        if not meta.get("deletionTimestamp") and needs_cleanup(job):
            self.enqueue((meta.get("namespace", ""), meta["name"]))

    async def sync(self, key: tuple[str, str]) -> float | None:
        namespace, name = key
        try:
            job = self.jobs.get(namespace, name).object
        except errors.StatusError:
            return None
        if job["metadata"].get("deletionTimestamp") or not needs_cleanup(job):
            return None
        expiry = expires_at(job)
        if expiry is None:
            log.warn(
                "unable to find the time when the Job {namespace}/{name} finished",
                namespace=namespace,
                name=name,
            )
            return None
        left = expiry - self.now()
        if left > 0:
            self.enqueue_after(key, left)
            return None
        uid = job["metadata"].get("uid")
        try:
            await self.jobs.delete(
                namespace,
                name,
                preconditions=Preconditions(uid=uid) if uid else None,
                propagation="Foreground",
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise
        return None
