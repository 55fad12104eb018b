"""What an update may change in a Job's spec (kube's ValidateJobSpecUpdate, with the
options its job strategy computes from the stored Job), and the rules of a CronJob's job
template kube adds to the spec rules (ValidateJobTemplateSpec, ValidateCronJobCreate).

A Job's selector, completion mode, pod failure policy, per-index backoff limit, managedBy
and success policy never change.  Its completions do not either, but for an Indexed Job
scaled with its parallelism (elastic indexed jobs).  Its pod template does not, but for a
Job suspended with no active pod that never started or carries Suspended=True: there the
scheduling directives (node affinity, node selector, tolerations, scheduling gates, the
template's labels and annotations) and the containers' resources may change (v1.36's
MutableSchedulingDirectivesForSuspendedJobs and MutablePodResourcesForSuspendedJobs, on by
default).  Bad values show as kube prints its internal types (``gointernal``).
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.registry.gointernal import go_text, same
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label

Obj = dict[str, Any]
IMMUTABLE = "field is immutable"
# (path, internal Go type) of the fields ValidateJobSpecUpdate keeps, after the template.
_IMMUTABLE_AFTER_TEMPLATE = (
    ("completionMode", "*string"),
    ("podFailurePolicy", "*batch.PodFailurePolicy"),
    ("backoffLimitPerIndex", "*int32"),
    ("managedBy", "*string"),
    ("successPolicy", "*batch.SuccessPolicy"),
)
CRONJOB_NAME_MAX = 52  # the cronjob controller appends an 11-character suffix


def immutable(path: str, go_type: str, new: Any, old: Any) -> list[FieldError]:
    """``ValidateImmutableField``: semantic equality, the new value printed by Go."""
    if same(go_type, new, old):
        return []
    return [field.invalid(path, go_text(go_type, new), IMMUTABLE)]


def validate_job_spec_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateJobSpecUpdate after its ValidateJobSpec (the create rules, the caller's)."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs = _completions(spec, old_spec)
    selector, old_selector = spec.get("selector"), old_spec.get("selector")
    errs += immutable("spec.selector", "*metav1.LabelSelector", selector, old_selector)
    errs += _template(spec, old_spec, mutable_template(old))
    for name, go_type in _IMMUTABLE_AFTER_TEMPLATE:
        errs += immutable(f"spec.{name}", go_type, spec.get(name), old_spec.get(name))
    return errs


def mutable_template(job: Obj) -> bool:
    """shouldAllowMutablePodTemplate of the stored Job: suspended, no active pod, and
    never started or marked Suspended=True."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    suspended = spec.get("suspend") is True
    not_started = status.get("startTime") is None
    marked = condition_is(status.get("conditions"), "Suspended", "True")
    return suspended and (not_started or marked) and not status.get("active")


def condition_is(conditions: Any, type_: str, status: str) -> bool:
    """IsConditionTrue / IsConditionFalse: some condition of the type has the status."""
    return any(
        isinstance(c, dict) and c.get("type") == type_ and c.get("status") == status
        for c in conditions or []
    )


def _completions(spec: Obj, old_spec: Obj) -> list[FieldError]:
    """validateCompletions: immutable unless Indexed (judged on the new spec), where a
    change must bring parallelism along (an unset value is the create rules' to refuse)."""
    completions, old_completions = spec.get("completions"), old_spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return immutable("spec.completions", "*int32", completions, old_completions)
    if completions == old_completions or completions is None:
        return []
    if completions != spec.get("parallelism"):
        detail = "can only be modified in tandem with spec.parallelism"
        return [field.invalid("spec.completions", completions, detail)]
    return []


def _template(spec: Obj, old_spec: Obj, mutable: bool) -> list[FieldError]:
    """validatePodTemplateUpdate: the whole template is immutable, or (a mutable
    template) all of it but the scheduling directives and the containers' resources."""
    template = spec.get("template") or {}
    old_template = old_spec.get("template") or {}
    if not mutable:
        return immutable("spec.template", "core.PodTemplateSpec", template, old_template)
    old_template = _with_scheduling_of(template, old_template)
    pod, old_pod = template.get("spec") or {}, old_template.get("spec") or {}
    return immutable("spec.template.spec", "core.PodSpec", pod, _with_resources_of(pod, old_pod))


def _with_scheduling_of(template: Obj, old_template: Obj) -> Obj:
    """The old template with the new one's scheduling directives: node affinity (an
    affinity of nothing else may go away), node selector, tolerations, scheduling gates,
    and the template's labels and annotations."""
    old = copy.deepcopy(old_template)
    pod, old_pod = template.get("spec") or {}, old.setdefault("spec", {})
    affinity, old_affinity = pod.get("affinity"), old_pod.get("affinity")
    if affinity is None and old_affinity is not None:
        old_affinity.pop("nodeAffinity", None)
        if not any(old_affinity.get(k) is not None for k in ("podAffinity", "podAntiAffinity")):
            del old_pod["affinity"]
    elif affinity is not None and old_affinity is None:
        old_pod["affinity"] = {"nodeAffinity": affinity.get("nodeAffinity")}
    elif affinity is not None and old_affinity is not None:
        old_affinity["nodeAffinity"] = affinity.get("nodeAffinity")
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        _take(old_pod, pod, key)
    meta, old_meta = template.get("metadata") or {}, old.setdefault("metadata", {})
    for key in ("annotations", "labels"):
        _take(old_meta, meta, key)
    return old


def _with_resources_of(pod: Obj, old_pod: Obj) -> Obj:
    """validatePodResourceUpdatesOnly: the old pod spec with the new containers'
    resources, where the lists keep their lengths and each container its name."""
    old = copy.deepcopy(old_pod)
    for key in ("containers", "initContainers"):
        new_list, old_list = pod.get(key) or [], old.get(key) or []
        if len(new_list) != len(old_list):
            continue
        for container, old_container in zip(new_list, old_list, strict=True):
            if container.get("name") == old_container.get("name"):
                _take(old_container, container, "resources")
    return old


def _take(into: Obj, source: Obj, key: str) -> None:
    if source.get(key) is None:
        into.pop(key, None)
    else:
        into[key] = copy.deepcopy(source[key])


def validate_indexed_hostname(job: Obj) -> list[FieldError]:
    """ValidateJob's last rule: an Indexed Job's last pod hostname (``<name>-<index>``)
    must be a DNS label."""
    spec = job.get("spec") or {}
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed" or not isinstance(completions, int):
        return []
    if completions <= 0:
        return []
    name = job["metadata"].get("name", "")
    hostname = f"{name}-{completions - 1}"
    if not is_dns1123_label(hostname):
        return []
    detail = f"will not able to create pod with invalid DNS label: {hostname}"
    return [field.invalid("metadata.name", name, detail)]


def validate_job_template_selector(job_spec: Obj) -> list[FieldError]:
    """ValidateJobTemplateSpec after the spec rules: the selector is generated, never
    given, and manualSelector is not true."""
    at = "spec.jobTemplate.spec"
    errs: list[FieldError] = []
    selector = job_spec.get("selector")
    if selector is not None:
        shown = go_text("*metav1.LabelSelector", selector)
        errs.append(field.invalid(f"{at}.selector", shown, "`selector` will be auto-generated"))
    if job_spec.get("manualSelector") is True:
        errs.append(field.not_supported(f"{at}.manualSelector", True, ["nil", "false"]))
    return errs


def with_job_template_rules(errs: list[FieldError], job_spec: Obj) -> list[FieldError]:
    """validateCronJobSpec's errors with the job template's selector rules in their place:
    after the job template's spec rules, before the history limits."""
    extra = validate_job_template_selector(job_spec)
    limits = ("spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit")
    at = next((i for i, e in enumerate(errs) if e.field in limits), len(errs))
    return errs[:at] + extra + errs[at:]


def validate_cronjob_name(cronjob: Obj) -> list[FieldError]:
    """ValidateCronJobCreate: room for the suffix of the Jobs' names (create only)."""
    name = cronjob["metadata"].get("name", "")
    if len(name) <= CRONJOB_NAME_MAX:
        return []
    detail = f"must be no more than {CRONJOB_NAME_MAX} characters"
    return [field.invalid("metadata.name", name, detail)]
