"""Writes to a Job's ``/status``: kube's ValidateJobUpdateStatus, with the options its job
status strategy computes from the stored and the written Job (v1.36: JobManagedBy is GA,
so the strict set).

Most rules judge a field only when the write changes it (or a condition it depends on),
so a status already off the rules (a spec scaled down under completedIndexes) does not
block unrelated writes.  Terminal conditions (Complete, Failed, FailureTarget,
SuccessCriteriaMet) never go away; the failed counter never decreases, nor the succeeded
one but for an elastic Indexed Job; completionTime is set once, startTime once while the
Job runs.  Values show as kube's internal types print (``gointernal``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from platform_api.gotext import json_string
from platform_api.registry.gointernal import go_text, go_timestamp, parse_time, same
from platform_api.registry.jobupdate import condition_is
from platform_api.validation import field
from platform_api.validation.field import OMIT, FieldError, GoText, go_quote

Obj = dict[str, Any]
_INT = re.compile(r"[+-]?[0-9]+\Z")  # what strconv.Atoi takes
_INT64 = 2**63


@dataclass(frozen=True)
class Options:
    """kube's JobStatusValidationOptions (AllowForSuccessCriteriaMetInExtendedScope is
    always on with JobManagedBy, so its rules never apply)."""

    decreasing_succeeded: bool = False
    decreasing_failed: bool = False
    disabling_terminal: bool = False
    invalid_completed: bool = False
    invalid_failed: bool = False
    failed_overlapping: bool = False
    completed_non_indexed: bool = False
    failed_no_per_index: bool = False
    failed_without_target: bool = False
    complete_without_criteria: bool = False
    finished_with_active: bool = False
    finished_without_start: bool = False
    finished_with_uncounted: bool = False
    start_time_update: bool = False
    completion_before_start: bool = False
    mutating_completion: bool = False
    complete_without_completion: bool = False
    completion_not_complete: bool = False
    complete_and_failed: bool = False
    complete_and_target: bool = False
    more_ready_than_active: bool = False
    finished_with_terminating: bool = False


class _Job:
    """The status facts the rules ask of one Job."""

    def __init__(self, job: Obj) -> None:
        self.spec: Obj = job.get("spec") or {}
        self.status: Obj = job.get("status") or {}
        conditions = self.status.get("conditions")
        self.complete = condition_is(conditions, "Complete", "True")
        self.failed = condition_is(conditions, "Failed", "True")
        self.target = condition_is(conditions, "FailureTarget", "True")
        self.criteria = condition_is(conditions, "SuccessCriteriaMet", "True")
        self.finished = self.complete or self.failed
        self.indexed = self.spec.get("completionMode") == "Indexed"

    def count(self, name: str) -> int:
        value = self.status.get(name)
        return value if isinstance(value, int) else 0


def options(new: Obj, old: Obj) -> Options:
    """getStatusValidationOptions: most rules only where the write changes their fields."""
    job, was = _Job(new), _Job(old)
    status, before = job.status, was.status

    def changed(name: str) -> bool:
        return status.get(name) != before.get(name)

    def time_changed(name: str) -> bool:
        return parse_time(status.get(name)) != parse_time(before.get(name))

    finished, complete = job.finished != was.finished, job.complete != was.complete
    failed, target = job.failed != was.failed, job.target != was.target
    criteria = job.criteria != was.criteria
    completed = (status.get("completedIndexes") or "") != (before.get("completedIndexes") or "")
    failed_indexes, active = changed("failedIndexes"), job.count("active") != was.count("active")
    start, completion = time_changed("startTime"), time_changed("completionTime")
    uncounted = not same(
        "*batch.UncountedTerminatedPods",
        status.get("uncountedTerminatedPods"),
        before.get("uncountedTerminatedPods"),
    )
    spec = job.spec
    zero_suspended = spec.get("suspend") is True and spec.get("completions") == 0
    resuming = condition_is(before.get("conditions"), "Suspended", "True") and condition_is(
        status.get("conditions"), "Suspended", "False"
    )
    elastic = job.indexed and spec.get("completions") == spec.get("parallelism")
    return Options(
        decreasing_succeeded=not elastic,
        decreasing_failed=True,
        disabling_terminal=True,
        invalid_completed=completed,
        invalid_failed=failed_indexes,
        completed_non_indexed=completed,
        failed_no_per_index=failed_indexes,
        failed_overlapping=failed_indexes or completed,
        failed_without_target=failed or failed_indexes,
        complete_without_criteria=complete or criteria,
        finished_with_active=finished or active,
        finished_without_start=(finished or start) and not zero_suspended,
        finished_with_uncounted=finished or uncounted,
        start_time_update=start and not resuming,
        completion_before_start=start or completion,
        mutating_completion=True,
        completion_not_complete=complete or completion,
        complete_without_completion=complete or completion,
        complete_and_failed=complete or failed,
        complete_and_target=complete or target,
        more_ready_than_active=changed("ready") or active,
        finished_with_terminating=finished or changed("terminating"),
    )


def validate_job_status_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateJobStatusUpdate (the caller checks the metadata)."""
    opts = options(new, old)
    job = _Job(new)
    errs = _counts(job) + _conditions(job, opts) + _finished(job, opts)
    errs += _indexes(job, opts) + _pods(job, opts) + _criteria(job)
    return errs + _transitions(job, _Job(old), opts)


def _counts(job: _Job) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in ("active", "succeeded", "failed", "ready", "terminating"):
        errs += field.nonnegative(f"status.{name}", job.status.get(name))
    uncounted = job.status.get("uncountedTerminatedPods")
    if not isinstance(uncounted, dict):
        return errs
    seen: set[str] = set()
    for kind in ("succeeded", "failed"):
        for i, uid in enumerate(uncounted.get(kind) or []):
            at, shown = f"status.uncountedTerminatedPods.{kind}[{i}]", GoText(json_string(uid))
            if uid == "":
                errs.append(field.invalid(at, shown, "must not be empty"))
            elif uid in seen:
                errs.append(field.duplicate(at, shown))
            else:
                seen.add(uid)
    return errs


def _conditions(job: _Job, opts: Options) -> list[FieldError]:
    """The terminal conditions' combinations, and the times they need."""
    errs: list[FieldError] = []
    start = parse_time(job.status.get("startTime"))
    completion = parse_time(job.status.get("completionTime"))
    shown = _time(job.status.get("completionTime"))
    if opts.complete_and_failed and job.complete and job.failed:
        errs.append(_conds("cannot set Complete=True and Failed=true conditions"))
    if opts.complete_and_target and job.complete and job.target:
        errs.append(_conds("cannot set Complete=True and FailureTarget=true conditions"))
    if opts.completion_not_complete and completion is not None and not job.complete:
        detail = "cannot set completionTime when there is no Complete=True condition"
        errs.append(field.invalid("status.completionTime", shown, detail))
    if opts.complete_without_completion and completion is None and job.complete:
        detail = "completionTime is required for Complete jobs"
        errs.append(field.required("status.completionTime", detail))
    if opts.completion_before_start and start and completion and completion < start:
        detail = "must be equal to or after `startTime`"
        errs.append(field.invalid("status.completionTime", shown, detail))
    if opts.failed_without_target and job.failed and not job.target:
        detail = "cannot set Failed=True condition without the FailureTarget=true condition"
        errs.append(_conds(detail))
    if opts.complete_without_criteria and job.complete and not job.criteria:
        detail = "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"
        errs.append(_conds(detail))
    return errs


def _finished(job: _Job, opts: Options) -> list[FieldError]:
    """A finished Job has no active pod, a start time, and no uncounted pod."""
    if not job.finished:
        return []
    errs: list[FieldError] = []
    status = job.status
    if opts.finished_with_active and job.count("active") > 0:
        detail = "active>0 is invalid for finished job"
        errs.append(field.invalid("status.active", job.count("active"), detail))
    if opts.finished_without_start and parse_time(status.get("startTime")) is None:
        errs.append(field.required("status.startTime", "startTime is required for finished job"))
    uncounted = status.get("uncountedTerminatedPods")
    pods = uncounted if isinstance(uncounted, dict) else {}
    if opts.finished_with_uncounted and (pods.get("failed") or pods.get("succeeded")):
        shown = go_text("*batch.UncountedTerminatedPods", uncounted)
        detail = "must be empty for finished job"
        errs.append(field.invalid("status.uncountedTerminatedPods", shown, detail))
    return errs


def _indexes(job: _Job, opts: Options) -> list[FieldError]:
    """completedIndexes and failedIndexes: their format, their mode, their overlap."""
    spec, status = job.spec, job.status
    completions, per_index = spec.get("completions"), spec.get("backoffLimitPerIndex")
    completed = status.get("completedIndexes") or ""
    failed = status.get("failedIndexes")
    errs: list[FieldError] = []
    if opts.invalid_completed and isinstance(completions, int):
        problem = indexes_error(completed, completions)
        if problem:
            detail = f"error parsing completedIndexes: {problem}"
            errs.append(field.invalid("status.completedIndexes", completed, detail))
    counted = per_index is not None and isinstance(failed, str)
    if opts.invalid_failed and counted and isinstance(completions, int):
        problem = indexes_error(str(failed), completions)
        if problem:
            shown = GoText(json_string(str(failed)))
            detail = f"error parsing failedIndexes: {problem}"
            errs.append(field.invalid("status.failedIndexes", shown, detail))
    if opts.completed_non_indexed and completed and not job.indexed:
        detail = "cannot set non-empty completedIndexes when non-indexed completion mode"
        errs.append(field.invalid("status.completedIndexes", completed, detail))
    if opts.failed_no_per_index and per_index is None and failed is not None:
        detail = "cannot set non-null failedIndexes when backoffLimitPerIndex is null"
        errs.append(field.invalid("status.failedIndexes", failed, detail))
    if opts.failed_overlapping and isinstance(completions, int) and failed is not None:
        problem = overlap_error(completed, failed, completions)
        if problem:
            errs.append(field.invalid("status.failedIndexes", failed, problem))
    return errs


def _pods(job: _Job, opts: Options) -> list[FieldError]:
    errs: list[FieldError] = []
    terminating, ready = job.status.get("terminating"), job.status.get("ready")
    finished = opts.finished_with_terminating and job.finished
    if finished and isinstance(terminating, int) and terminating > 0:
        detail = "terminating>0 is invalid for finished job"
        errs.append(field.invalid("status.terminating", terminating, detail))
    if opts.more_ready_than_active and isinstance(ready, int) and ready > job.count("active"):
        errs.append(field.invalid("status.ready", ready, "cannot set more ready pods than active"))
    return errs


def _criteria(job: _Job) -> list[FieldError]:
    """SuccessCriteriaMet excludes failure; a success policy's Job completes through it."""
    errs: list[FieldError] = []
    if job.criteria and job.failed:
        errs.append(_conds("cannot set SuccessCriteriaMet=True and Failed=true conditions"))
    if job.criteria and job.target:
        errs.append(_conds("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
    if job.spec.get("successPolicy") is not None and not job.criteria and job.complete:
        detail = (
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"
        )
        errs.append(_conds(detail))
    return errs


def _transitions(job: _Job, was: _Job, opts: Options) -> list[FieldError]:
    """What the write may not undo: terminal conditions, counters, the times."""
    errs: list[FieldError] = []
    if opts.disabling_terminal:
        for type_, before, now in (
            ("Failed", was.failed, job.failed),
            ("Complete", was.complete, job.complete),
            ("FailureTarget", was.target, job.target),
        ):
            if before and not now:
                errs.append(_conds(f"cannot disable the terminal {type_}=True condition"))
    for name, rejected in (
        ("failed", opts.decreasing_failed),
        ("succeeded", opts.decreasing_succeeded),
    ):
        if rejected and job.count(name) < was.count(name):
            detail = f"cannot decrease the {name} counter"
            errs.append(field.invalid(f"status.{name}", job.count(name), detail))
    errs += _times(job, was, opts)
    if was.criteria and not job.criteria:
        errs.append(_conds("cannot disable the SuccessCriteriaMet=True condition"))
    if was.complete and not was.criteria and job.criteria:
        detail = "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"
        errs.append(_conds(detail))
    return errs


def _times(job: _Job, was: _Job, opts: Options) -> list[FieldError]:
    """completionTime is set once; startTime once, but while the Job is suspended."""
    errs: list[FieldError] = []
    completion = job.status.get("completionTime")
    now, before = parse_time(completion), parse_time(was.status.get("completionTime"))
    if opts.mutating_completion and now and before and now != before:
        errs.append(field.invalid("status.completionTime", _time(completion), "field is immutable"))
    start = job.status.get("startTime")
    now, before = parse_time(start), parse_time(was.status.get("startTime"))
    running = job.spec.get("suspend") is not True
    if opts.start_time_update and before is not None and now != before and running:
        detail = "field is immutable for unsuspended job once set"
        errs.append(field.invalid("status.startTime", _time(start), detail))
    return errs


def _conds(detail: str) -> FieldError:
    return field.invalid("status.conditions", OMIT, detail)


def _time(value: Any) -> GoText:
    """A *metav1.Time as json.Marshal writes it."""
    stamp = go_timestamp(value)
    return GoText("null" if stamp is None else json_string(stamp))


def _interval(text: str, completions: int) -> tuple[int, int] | str:
    """parseIndexInterval: ``x`` or ``x-y`` (x < y) below completions, or the error."""
    limits = text.split("-")
    if len(limits) > 2:
        return (
            f"the fragment {go_quote(text)} violates the requirement that an index "
            "interval can have at most two parts separated by '-'"
        )
    bounds: list[int] = []
    for limit in limits:
        value = int(limit) if _INT.match(limit) else None
        if value is None or not -_INT64 <= value < _INT64:
            return f"cannot convert string to integer for index: {go_quote(limit)}"
        if value >= completions:
            return f"too large index: {go_quote(limit)}"
        bounds.append(value)
    if len(bounds) == 2 and bounds[0] >= bounds[1]:
        return f"non-increasing order, previous: {bounds[0]}, current: {bounds[1]}"
    return bounds[0], bounds[-1]


def indexes_error(text: str, completions: int) -> str:
    """validateIndexesFormat: increasing intervals, comma separated; "" when fine."""
    return index_total(text, completions)[0]


def index_total(text: str, completions: int) -> tuple[str, int]:
    """validateIndexesFormat: (the error or "", how many indexes the list names)."""
    if not text:
        return "", 0
    last: int | None = None
    total = 0
    for fragment in text.split(","):
        parsed = _interval(fragment, completions)
        if isinstance(parsed, str):
            return parsed, 0
        if last is not None and last >= parsed[0]:
            return f"non-increasing order, previous: {last}, current: {parsed[0]}", 0
        total += parsed[1] - parsed[0] + 1
        last = parsed[1]
    return "", total


def overlap_error(completed: str, failed: str, completions: int) -> str:
    """validateFailedIndexesNotOverlapCompleted: the first index in both lists (a
    fragment that does not parse is skipped: the format rules report it); "" when none."""
    if not completed or not failed:
        return ""
    done = [_interval(f, completions) for f in completed.split(",")]
    lost = [_interval(f, completions) for f in failed.split(",")]
    i = j = 0
    while i < len(done) and j < len(lost):
        a, b = done[i], lost[j]
        if isinstance(a, str):
            i += 1
        elif isinstance(b, str):
            j += 1
        elif a[0] <= b[1] and b[0] <= a[1]:
            return f"failedIndexes and completedIndexes overlap at index: {max(a[0], b[0])}"
        elif a[0] <= b[0]:
            i += 1
        else:
            j += 1
    return ""
