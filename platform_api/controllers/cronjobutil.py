"""The cronjob-controller's arithmetic (kube's cronjob ``utils.go``): which scheduled time
is due, when to look again, and the Job a scheduled time makes.

Times are unix seconds: ``now`` a float from the reactor, scheduled times whole seconds.
A CronJob counts its schedule from ``status.lastScheduleTime``, else from its creation;
with ``startingDeadlineSeconds`` nothing older than the deadline is started.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from platform_api.controllers import podcontrol
from platform_api.registry.cronschedule import (
    ConstantDelaySchedule,
    ScheduleError,
    SpecSchedule,
    load_location,
)
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
Schedule = SpecSchedule | ConstantDelaySchedule
API_VERSION, KIND = "batch/v1", "CronJob"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # kube's padding on a requeue, for clock skew
TOO_MANY_MISSED = 100
TOO_MANY_MISSED_MESSAGE = (
    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
)
FORBID_MESSAGE = (
    "Not starting job because prior execution is running and concurrency policy is Forbid"
)
UNSUPPORTED_MESSAGE = (
    "CRON_TZ or TZ used in schedule {schedule} is not officially supported, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass
class Pass:
    """One sync's working copy of a CronJob and whether its status must be written."""

    cronjob: Obj
    now: float
    dirty: bool = False

    @property
    def status(self) -> Obj:
        status: Obj = self.cronjob.setdefault("status", {})
        return status

    def active(self) -> list[Obj]:
        return list(self.status.get("active") or [])

    def drop_active(self, uid: str) -> None:
        self.status["active"] = [r for r in self.active() if r.get("uid") != uid]


class Missed(enum.Enum):
    NONE = "none"
    FEW = "few"
    MANY = "many"


def _time(value: Any) -> float | None:
    return parse_timestamp(value) if value else None


def most_recent_schedule_time(
    cronjob: Obj, now: float, schedule: Schedule, include_deadline: bool
) -> tuple[float, int | None, Missed]:
    """kube's mostRecentScheduleTime: the time counted from, the latest scheduled time
    at or before ``now`` (None: none is due) and how many were missed.  ScheduleError
    for a schedule that never fires ("59 23 31 2 *")."""
    earliest = _time(cronjob["metadata"].get("creationTimestamp")) or 0.0
    last = _time((cronjob.get("status") or {}).get("lastScheduleTime"))
    if last is not None:
        earliest = last
    deadline = (cronjob.get("spec") or {}).get("startingDeadlineSeconds")
    if include_deadline and deadline is not None:
        earliest = max(earliest, now - deadline)
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return earliest, None, Missed.NONE
    if t1 is not None and t2 is not None and now < t2:
        return earliest, t1, Missed.NONE
    if t1 is None or t2 is None or t2 - t1 < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    # An estimate of the times missed (intervals of the first two), then a walk from
    # just before the last of them, as kube counts.
    between = t2 - t1
    missed = int(now - t1) // between + 1
    recent: int | None = None
    t: int | None = schedule.next(t1 + (missed - 2) * between)
    while t is not None and t <= now:
        recent, t = t, schedule.next(t)
    return earliest, recent, Missed.MANY if missed > TOO_MANY_MISSED else Missed.FEW


def next_schedule_delay(cronjob: Obj, now: float, schedule: Schedule) -> float:
    """kube's nextScheduleTimeDuration: seconds until the next scheduled time after the
    latest due one (padded by 100 ms); 0 when the schedule never fires again."""
    try:
        earliest, recent, missed = most_recent_schedule_time(cronjob, now, schedule, False)
    except ScheduleError:
        start: float = now
    else:
        start = recent if recent is not None else earliest if missed is Missed.NONE else now
    upcoming = schedule.next(start)
    if upcoming is None:
        return 0.0
    return upcoming + NEXT_SCHEDULE_DELTA - now


def format_schedule(cronjob: Obj) -> str:
    """kube's formatSchedule: the schedule with the time zone as a ``TZ=`` prefix; one
    carrying its own TZ (or a zone that does not load) taken as it is."""
    spec = cronjob.get("spec") or {}
    schedule: str = spec.get("schedule", "")
    zone = spec.get("timeZone")
    if "TZ" in schedule or zone is None:
        return schedule
    try:
        load_location(zone)
    except ScheduleError:
        return schedule
    return f"TZ={zone} {schedule}"


def job_name(cronjob: Obj, scheduled: int) -> str:
    """``<cronjob>-<scheduled time in minutes since the epoch>``: one Job per time."""
    return f"{cronjob['metadata']['name']}-{scheduled // 60}"


def job_from_template(cronjob: Obj, scheduled: int) -> Obj:
    """kube's getJobFromTemplate2: the template's labels, annotations and spec, the
    scheduled time annotated (in the CronJob's time zone), the CronJob as controller."""
    spec = cronjob.get("spec") or {}
    template = spec.get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    zone = load_location(spec.get("timeZone") or "")
    annotations = dict(template_meta.get("annotations") or {})
    annotations[SCHEDULED_AT] = rfc3339(scheduled, zone)
    meta: Obj = {"name": job_name(cronjob, scheduled)}
    if template_meta.get("labels"):
        meta["labels"] = dict(template_meta["labels"])
    meta["annotations"] = annotations
    meta["ownerReferences"] = [podcontrol.controller_ref(cronjob, API_VERSION, KIND)]
    job_spec = copy.deepcopy(template.get("spec") or {})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": job_spec}


def object_reference(job: Obj) -> Obj:
    """The ObjectReference ``status.active`` lists (client-go's GetReference)."""
    meta = job["metadata"]
    return {
        "kind": "Job",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "batch/v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }


def by_start_time(job: Obj) -> tuple[bool, float, str]:
    """kube's byJobStartTime: the earliest started first, unstarted last, then by name."""
    started = _time((job.get("status") or {}).get("startTime"))
    return started is None, started or 0.0, job["metadata"]["name"]


def rfc3339(when: int, zone: tzinfo) -> str:
    """Go's time.RFC3339 of ``when`` in ``zone`` ("Z" for a zero offset)."""
    local = datetime.fromtimestamp(when, zone)
    offset = local.utcoffset()
    seconds = int(offset.total_seconds()) if offset is not None else 0
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if seconds == 0:
        return text + "Z"
    minutes = abs(seconds) // 60
    return f"{text}{'-' if seconds < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


def rfc1123z(when: float) -> str:
    """Go's time.RFC1123Z in UTC: "Thu, 19 May 2016 10:00:00 +0000"."""
    t = datetime.fromtimestamp(int(when // 1), UTC)
    day, month = _DAYS[t.weekday()], _MONTHS[t.month - 1]
    return f"{day}, {t.day:02d} {month} {t.year} {t:%H:%M:%S} +0000"


def succeeded(job: Obj) -> bool:
    """kube's IsJobSucceeded: a Complete condition that is True."""
    conditions = (job.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions)


def note_success(work: Pass, job: Obj) -> None:
    """A successful Job's completion time, when it is the latest seen."""
    completed = (job.get("status") or {}).get("completionTime")
    last = work.status.get("lastSuccessfulTime")
    if last is None:
        work.status["lastSuccessfulTime"] = completed
        work.dirty = True
        last = completed
    if completed and last and (_time(completed) or 0) > (_time(last) or 0):
        work.status["lastSuccessfulTime"] = completed
        work.dirty = True


def clean_status(status: Obj) -> Obj:
    """The status as Go writes it: an empty active list and unset times are left out."""
    return {k: v for k, v in status.items() if v is not None and v != []}
