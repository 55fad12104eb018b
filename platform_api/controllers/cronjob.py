"""cronjob-controller (kube's CronJobControllerV2): a CronJob makes a Job at each time its
schedule names, and keeps the history of them it is asked to keep.

Each sync of a CronJob first deletes its oldest finished Jobs beyond
``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit``, then settles
``status.active`` with its Jobs (finished ones leave it, gone ones too, a successful
one's completion time becomes ``status.lastSuccessfulTime``), then, unless it is
suspended, starts the latest scheduled time that is due: not if that is older than
``startingDeadlineSeconds``, not again once started, not while one runs under
``concurrencyPolicy: Forbid``; under Replace the running ones are deleted first.  The
Job is named after its scheduled time, so a time is started once even if the status
write is lost.  The CronJob then waits on a timer for its next scheduled time.

Jobs are created and deleted through the API (as kube's controller, a client); the
status and the events (kube's reasons and messages) are written to the stores.
"""

from __future__ import annotations

import copy
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.cronjobutil import (
    API_VERSION,
    FORBID_MESSAGE,
    KIND,
    TOO_MANY_MISSED_MESSAGE,
    UNSUPPORTED_MESSAGE,
    Missed,
    Pass,
    Schedule,
    by_start_time,
    clean_status,
    format_schedule,
    job_from_template,
    job_name,
    most_recent_schedule_time,
    next_schedule_delay,
    note_success,
    object_reference,
    rfc1123z,
    succeeded,
)
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.controllers.remote import RestWrites
from platform_api.controllers.ttlafterfinished import finished_condition
from platform_api.errors import StatusError
from platform_api.registry.cronschedule import ScheduleError, load_location, parse
from platform_api.registry.store import Store, resource_prefix
from platform_api.storage.interface import Event
from platform_api.timestamps import format_timestamp, parse_timestamp
from platform_api.validation.field import go_quote

log = Logger()
Obj = dict[str, Any]
Key = tuple[str, str]
COMPONENT = "cronjob-controller"
MAX_BACKOFF = 1000.0  # kube's per-item rate limiter: 5 ms doubling, at most 1000 s


class SyncError(Exception):
    """A sync that could not finish (kube returns an error: the key is retried later)."""


class CronJobController(Controller):
    name = COMPONENT

    def __init__(self, cronjobs: Store, jobs: Store, events: Store, *args: Any) -> None:
        super().__init__(*args)
        self.cronjobs, self.jobs = cronjobs, jobs  # jobs: written through the API
        self.index, self.job_index = ByNamespace(cronjobs), ByNamespace(jobs)
        self.prefixes = resource_prefix(cronjobs.resource), resource_prefix(jobs.resource)
        self.events = EventRecorder(events, COMPONENT, self.reactor)
        self._failures: dict[Key, int] = {}

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        self.job_index.load()
        for cronjob in self.index.load():
            self.enqueue(_key(cronjob))

    def watched(self) -> tuple[bytes, ...]:
        return self.prefixes

    def observe(self, event: Event) -> None:
        cronjobs, jobs = self.prefixes
        if event.key.startswith(cronjobs):
            old, new = self.index.apply(event)
            if old is not None and new is not None:
                self._cronjob_updated(old, new)
            elif old is not None or new is not None:
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
        elif event.key.startswith(jobs):
            self._job_changed(*self.job_index.apply(event))

    def _job_changed(self, old: Obj | None, new: Obj | None) -> None:
        """kube's addJob/updateJob/deleteJob: wake the CronJob that controls the Job
        (before and after a change of its controller)."""
        if old is not None and new is not None and _version(old) == _version(new):
            return
        for job in (old, new):
            owner = self._owner_of(job) if job is not None else None
            if owner is not None:
                self.enqueue(_key(owner))

    def _cronjob_updated(self, old: Obj, new: Obj) -> None:
        """kube's updateCronJob: a new schedule or time zone waits for its next time;
        any other change is looked at now."""
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        fields = ("schedule", "timeZone")
        if all(spec.get(f) == old_spec.get(f) for f in fields):
            self.enqueue(_key(new))
            return
        try:
            schedule = parse(format_schedule(new))
        except ScheduleError:
            message = f"unparseable schedule for cronjob: {spec.get('schedule', '')}"
            self._event(new, "Warning", "UnParseableCronJobSchedule", message)
            return
        now = self.reactor.seconds()
        self.enqueue(_key(new), max(next_schedule_delay(new, now, schedule), 0.0))

    def _owner_of(self, job: Obj) -> Obj | None:
        return podcontrol.resolve(self.index, job, KIND)

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Key) -> float | None:
        found = current_object(self.cronjobs, *key)
        if found is None:
            self._failures.pop(key, None)
            return None
        jobs = [
            j
            for j in self.job_index.in_namespace(key[0])
            if (ref := podcontrol.controller_of(j)) is not None and ref.get("name") == key[1]
        ]
        work = Pass(copy.deepcopy(found), self.reactor.seconds())
        await self._clean_up_finished(work, jobs)
        error: Exception | None = None
        requeue: float | None = None
        try:
            work.now = self.reactor.seconds()
            await self._reconcile(work, jobs)
            requeue = await self._schedule(work)
        except (StatusError, SyncError) as e:
            error = e
            log.info("cronjob {key}: {error}", key="/".join(key), error=e)
        if work.dirty and not await self._write_status(found, work.cronjob):
            return self._backoff(key)
        if requeue is not None:
            self._failures.pop(key, None)
            return max(requeue, 0.0)
        return self._backoff(key) if error is not None else None

    def _backoff(self, key: Key) -> float:
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        return min(0.005 * 2 ** (failures - 1), MAX_BACKOFF)

    async def _reconcile(self, work: Pass, jobs: list[Obj]) -> None:
        """The active list against the Jobs: finished ones leave it, successes set
        ``lastSuccessfulTime``, ones the controller did not record are reported, and
        recorded ones that are gone leave it."""
        namespace, name = _key(work.cronjob)
        children = set()
        for job in jobs:
            uid = job["metadata"].get("uid", "")
            children.add(uid)
            listed = any(r.get("uid") == uid for r in work.active())
            finished = finished_condition(job)
            if not listed and finished is None:
                fresh = Pass(await self._fresh(namespace, name), work.now)
                if any(r.get("uid") == uid for r in fresh.active()):
                    work.cronjob = fresh.cronjob
                    continue
                message = f"Saw a job that the controller did not create or forgot: {_name(job)}"
                self._event(work.cronjob, "Warning", "UnexpectedJob", message)
            elif finished is not None:
                if listed:
                    work.drop_active(uid)
                    message = f"Saw completed job: {_name(job)}, condition: {finished['type']}"
                    self._event(work.cronjob, "Normal", "SawCompletedJob", message)
                    work.dirty = True
                if succeeded(job):
                    note_success(work, job)
        for ref in work.active():
            if ref.get("uid") in children:
                continue
            if current_object(self.jobs, ref.get("namespace", ""), ref.get("name", "")) is None:
                message = f"Active job went missing: {ref.get('name', '')}"
                self._event(work.cronjob, "Normal", "MissingJob", message)
                work.drop_active(ref.get("uid", ""))
                work.dirty = True

    async def _fresh(self, namespace: str, name: str) -> Obj:
        """The CronJob as the server has it now, not as an informer last saw it (kube
        asks the API): the manager's store reads from the server, the server's own
        store is current already."""
        if isinstance(self.cronjobs, RestWrites):
            return await self.cronjobs.read_current(namespace, name)
        return copy.deepcopy(self.cronjobs.get(namespace, name).object)

    async def _schedule(self, work: Pass) -> float | None:
        """Start the latest due scheduled time, if it should be; the delay until the
        next one (None: wait for a change)."""
        cronjob, now = work.cronjob, work.now
        spec = cronjob.get("spec") or {}
        if cronjob["metadata"].get("deletionTimestamp"):
            return None
        zone = spec.get("timeZone")
        if zone is not None:
            try:
                load_location(zone)
            except ScheduleError as e:
                message = f"invalid timeZone: {go_quote(zone)}: {e}"
                self._event(cronjob, "Warning", "UnknownTimeZone", message)
                return None
        if spec.get("suspend"):
            return None
        try:
            schedule = parse(self._formatted(cronjob))
        except ScheduleError as e:
            message = f"unparseable schedule: {go_quote(spec.get('schedule', ''))} : {e}"
            self._event(cronjob, "Warning", "UnparseableSchedule", message)
            return None
        try:
            scheduled = self._due(cronjob, now, schedule)
        except ScheduleError as e:
            message = f"invalid schedule: {spec.get('schedule', '')} : {e}"
            self._event(cronjob, "Warning", "InvalidSchedule", message)
            return None
        later = next_schedule_delay(cronjob, now, schedule)
        if scheduled is None or not self._may_start(work, scheduled):
            return later
        if spec.get("concurrencyPolicy") == "Replace":
            await self._replace_active(work)
        if not await self._start(work, scheduled):
            return None
        return next_schedule_delay(work.cronjob, now, schedule)

    def _due(self, cronjob: Obj, now: float, schedule: Schedule) -> int | None:
        """kube's nextScheduleTime: the latest unstarted scheduled time at or before now,
        with a warning when more than 100 were missed."""
        _, recent, missed = most_recent_schedule_time(cronjob, now, schedule, True)
        if recent is None or recent > now:
            return None
        if missed is Missed.MANY:
            self._event(cronjob, "Warning", "TooManyMissedTimes", TOO_MANY_MISSED_MESSAGE)
        return recent

    def _may_start(self, work: Pass, scheduled: int) -> bool:
        """Not past the starting deadline, not started already, not forbidden by a
        running Job."""
        cronjob = work.cronjob
        spec = cronjob.get("spec") or {}
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + deadline < work.now:
            message = f"Missed scheduled time to start a job: {rfc1123z(scheduled)}"
            self._event(cronjob, "Warning", "MissSchedule", message)
            return False
        name, namespace = job_name(cronjob, scheduled), _key(cronjob)[0]
        active = work.active()
        if any(r.get("name") == name and r.get("namespace") == namespace for r in active):
            return False
        last = work.status.get("lastScheduleTime")
        if last and parse_timestamp(last) == scheduled:
            return False
        if spec.get("concurrencyPolicy") == "Forbid" and active:
            self._event(cronjob, "Normal", "JobAlreadyActive", FORBID_MESSAGE)
            return False
        return True

    async def _replace_active(self, work: Pass) -> None:
        for ref in work.active():
            namespace, name = ref.get("namespace", ""), ref.get("name", "")
            try:
                job = self.jobs.get(namespace, name).object
            except StatusError as e:
                self._event(work.cronjob, "Warning", "FailedGet", f"Get job: {e.message}")
                raise
            if not await self._delete_job(work, job):
                raise SyncError(f"could not replace job {namespace}/{name}")
            work.dirty = True

    async def _start(self, work: Pass, scheduled: int) -> bool:
        """Create the scheduled time's Job and list it as active; False when a Job of
        that name exists that is not this CronJob's to record."""
        cronjob = work.cronjob
        namespace = _key(cronjob)[0]
        try:
            job = job_from_template(cronjob, scheduled)
        except ScheduleError as e:
            raise SyncError(f"unable to make Job from template: {e}") from None
        try:
            made = (await self.jobs.create(namespace, job)).object
        except StatusError as e:
            if podcontrol.terminating_namespace(e):
                raise
            if e.code != 409 or e.reason != errors.ALREADY_EXISTS:
                message = f"Error creating job: {e.message}"
                self._event(cronjob, "Warning", "FailedCreate", message)
                raise
            made = self.jobs.get(namespace, job["metadata"]["name"]).object
            ref = podcontrol.controller_of(made)
            uid = made["metadata"].get("uid")
            if ref is None or ref.get("uid") != cronjob["metadata"].get("uid"):
                return False  # someone else's Job: they keep the status
            if any(r.get("uid") == uid for r in work.active()):
                return False
            log.info("cronjob {key}: Job already exists", key="/".join(_key(cronjob)))
        else:
            self._event(cronjob, "Normal", "SuccessfulCreate", f"Created job {_name(made)}")
        work.status["active"] = [*work.active(), object_reference(made)]
        work.status["lastScheduleTime"] = format_timestamp(scheduled)
        work.dirty = True
        return True

    # -- history -----------------------------------------------------------------------

    async def _clean_up_finished(self, work: Pass, jobs: list[Obj]) -> None:
        """kube's cleanupFinishedJobs: the oldest finished Jobs beyond the limits go."""
        spec = work.cronjob.get("spec") or {}
        succeeded: list[Obj] = []
        failed: list[Obj] = []
        for job in jobs:
            finished = finished_condition(job)
            if finished is not None:
                (succeeded if finished["type"] == "Complete" else failed).append(job)
        for limit, finished_jobs in (
            (spec.get("successfulJobsHistoryLimit"), succeeded),
            (spec.get("failedJobsHistoryLimit"), failed),
        ):
            if limit is None or len(finished_jobs) <= limit:
                continue
            for job in sorted(finished_jobs, key=by_start_time)[: len(finished_jobs) - limit]:
                if await self._delete_job(work, job):
                    work.dirty = True

    async def _delete_job(self, work: Pass, job: Obj) -> bool:
        """Delete a Job (its Pods by the garbage collector, in the background) and its
        entry in the active list."""
        meta = job["metadata"]
        try:
            await self.jobs.delete(
                meta.get("namespace", ""), meta["name"], propagation="Background"
            )
        except StatusError as e:
            self._event(work.cronjob, "Warning", "FailedDelete", f"Deleted job: {e.message}")
            return False
        work.drop_active(meta.get("uid", ""))
        self._event(work.cronjob, "Normal", "SuccessfulDelete", f"Deleted job {meta['name']}")
        return True

    # -- writes ------------------------------------------------------------------------

    async def _write_status(self, found: Obj, cronjob: Obj) -> bool:
        """The status as the sync left it, when it differs from the stored one (kube's
        UpdateStatus; a write that changes nothing is not made).  False on a failure to
        retry."""
        status = clean_status(cronjob.get("status") or {})
        if status == clean_status(found.get("status") or {}):
            return True
        uid = cronjob["metadata"].get("uid")

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != uid:
                raise errors.conflict("cronjobs", "batch", existing["metadata"]["name"])
            existing["status"] = status
            return existing

        namespace, name = _key(cronjob)
        try:
            await self.cronjobs.update(namespace, name, change, subresource="status")
        except StatusError as e:
            if e.code == 404:
                return True
            log.info("cronjob {key}: status: {error}", key=f"{namespace}/{name}", error=e)
            return False
        return True

    def _formatted(self, cronjob: Obj) -> str:
        """The schedule to parse; one carrying its own TZ is warned about, as kube does."""
        schedule: str = (cronjob.get("spec") or {}).get("schedule", "")
        if "TZ" in schedule:
            message = UNSUPPORTED_MESSAGE.format(schedule=go_quote(schedule))
            self._event(cronjob, "Warning", "UnsupportedSchedule", message)
        return format_schedule(cronjob)

    def _event(self, cronjob: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(cronjob, API_VERSION, KIND, type_, reason, message)


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def _version(obj: Obj) -> str:
    return str(obj["metadata"].get("resourceVersion", ""))


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])
