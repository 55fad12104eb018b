"""Table columns of Jobs and CronJobs (kube's printJob and printCronJob): what ``kubectl
get jobs,cronjobs`` shows."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import (
    AGE,
    age,
    column,
    created,
    format_selector,
    human_duration,
    meta,
    register,
    template_containers,
    timestamp,
)
from platform_api.endpoints.printers_workloads import CONTAINERS, IMAGES

Obj = dict[str, Any]
_SELECTOR = column(
    "Selector",
    "A label query over pods that should match the pod count. Normally, the system sets this "
    "field for you. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    priority=1,
)


def _condition(status: Obj, kind: str) -> bool:
    """kube's hasJobCondition: the first condition of that type is True."""
    for condition in status.get("conditions") or []:
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


def _job_state(obj: Obj) -> str:
    """The first condition that holds; a deleted job is Terminating unless it finished."""
    status = obj.get("status") or {}
    finished = next((s for s in ("Complete", "Failed") if _condition(status, s)), None)
    if finished:
        return finished
    if meta(obj).get("deletionTimestamp"):
        return "Terminating"
    states = ("Suspended", "FailureTarget", "SuccessCriteriaMet")
    return next((s for s in states if _condition(status, s)), "Running")


def _completions(spec: Obj, succeeded: int) -> str:
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = spec.get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _duration(status: Obj) -> str:
    start, end = status.get("startTime"), status.get("completionTime")
    if not start:
        return ""
    if not end:
        return age(start)
    return human_duration(timestamp(end) - timestamp(start))


def _job_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _job_state(obj),
        _completions(spec, status.get("succeeded", 0)),
        _duration(status),
        created(obj),
        *template_containers(spec.get("template")),
        format_selector(spec.get("selector")),
    ]


register(
    "batch",
    "jobs",
    (
        column("Status", "Status of the job."),
        column(
            "Completions",
            "The number of pods which reached phase Succeeded. The value increases "
            "monotonically for a given spec. However, it may decrease in reaction to scale "
            "down of elastic indexed jobs.",
        ),
        column("Duration", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        _SELECTOR,
    ),
    _job_cells,
)


def _bool_pointer(value: bool | None) -> str:
    """kube's printBoolPtr."""
    return "<unset>" if value is None else str(bool(value))


def _cron_job_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    last = status.get("lastScheduleTime")
    return [
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        _bool_pointer(spec.get("suspend")),
        len(status.get("active") or []),
        age(last) if last else "<none>",
        created(obj),
        *template_containers(job.get("template")),
        format_selector(job.get("selector")),
    ]


register(
    "batch",
    "cronjobs",
    (
        column("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
        column(
            "Timezone",
            "The time zone name for the given schedule, see "
            "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, "
            "this will default to the time zone of the kube-controller-manager process. The "
            "set of valid time zone names and the time zone offset is loaded from the "
            "system-wide time zone database by the API server during CronJob validation and "
            "the controller manager during execution. If no system-wide time zone database can "
            "be found a bundled version of the database is used instead. If the time zone name "
            "becomes invalid during the lifetime of a CronJob or due to a change in host "
            "configuration, the controller will stop creating new new Jobs and will create a "
            "system event with the reason UnknownTimeZone. More information can be found in "
            "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
        ),
        column(
            "Suspend",
            "This flag tells the controller to suspend subsequent executions, it does not apply "
            "to already started executions.  Defaults to false.",
            "boolean",
        ),
        column("Active", "A list of pointers to currently running jobs.", "integer"),
        column(
            "Last Schedule",
            "Information when was the last time the job was successfully scheduled.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        _SELECTOR,
    ),
    _cron_job_cells,
)
