"""A Job's selector: generated on create unless ``manualSelector`` (kube's
generateSelector), checked as kube's validateGeneratedSelector and ValidateJobSpec check
it: the template carries the job's name and uid labels, the selector selects them, and
the selector matches the template's labels."""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.labelselector import validate_label_selector

Obj = dict[str, Any]
CONTROLLER_UID, JOB_NAME = "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"
LEGACY_UID, LEGACY_NAME = "controller-uid", "job-name"
TEMPLATE = "spec.template.metadata"


def default_job_labels(job: Obj) -> None:
    """SetDefaults_Job: a job without labels shares its template's (the same map, as in
    Go, so the labels generate_selector adds to the template show on the job too)."""
    meta = job.setdefault("metadata", {})
    template = ((job.get("spec") or {}).get("template") or {}).get("metadata") or {}
    if not meta.get("labels") and template.get("labels"):
        meta["labels"] = template["labels"]


def copy_template_labels(job: Obj) -> None:
    """After validation: kube defaults the job's labels from its template's again when
    the stored job is read, so a job created without either carries the generated ones."""
    meta = job.setdefault("metadata", {})
    template = ((job.get("spec") or {}).get("template") or {}).get("metadata") or {}
    if not meta.get("labels") and template.get("labels"):
        meta["labels"] = dict(template["labels"])
    elif meta.get("labels") is template.get("labels"):
        meta["labels"] = dict(meta["labels"])  # stored apart from here on


def generate_selector(job: Obj) -> None:
    """On create: the name and uid labels on the template (the user's win: validation
    refuses a conflict) and a selector of the uid."""
    spec = job.setdefault("spec", {})
    meta = job["metadata"]
    if not spec.get("manualSelector"):
        template = spec.setdefault("template", {}).setdefault("metadata", {})
        labels = template.setdefault("labels", {})
        for key in (LEGACY_NAME, JOB_NAME):
            labels.setdefault(key, meta.get("name", ""))
        for key in (LEGACY_UID, CONTROLLER_UID):
            labels.setdefault(key, meta.get("uid", ""))
        selector = spec.get("selector") or {}
        spec["selector"] = selector
        selector.setdefault("matchLabels", {}).setdefault(CONTROLLER_UID, meta.get("uid", ""))


def _matches(selector: Any, labels: dict[str, str]) -> bool:
    """``LabelSelectorAsSelector``: none selects nothing, an empty one everything."""
    if selector is None:
        return False
    try:
        return label_selector_from(selector).matches(labels)
    except SelectorError:
        return True  # unconvertible: refused by the selector's own validation instead


def validate_generated_selector(job: Obj) -> list[FieldError]:
    spec = job.get("spec") or {}
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    meta = job["metadata"]
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    name, uid = meta.get("name", ""), meta.get("uid", "")
    errs: list[FieldError] = []
    if not uid:
        errs.append(field.required("metadata.uid"))
    expected = {LEGACY_UID: uid, LEGACY_NAME: name, CONTROLLER_UID: uid, JOB_NAME: name}
    for key, value in expected.items():
        at, why = f"{TEMPLATE}.labels[{key}]", f"must be '{value}'"
        if key not in labels:
            errs.append(field.required(at, why))
        elif labels[key] != value:
            errs.append(field.invalid(at, labels, why))
    if not _matches(spec["selector"], expected):
        shown = _go_selector(spec["selector"])
        errs.append(field.invalid("spec.selector", shown, "`selector` not auto-generated"))
    return errs


def _go_selector(selector: Any) -> Any:
    """A LabelSelector printed as Go marshals it: matchLabels (keys sorted) before
    matchExpressions."""
    if not isinstance(selector, dict):
        return selector
    ordered: Obj = {}
    if selector.get("matchLabels"):
        ordered["matchLabels"] = dict(sorted(selector["matchLabels"].items()))
    if selector.get("matchExpressions"):
        ordered["matchExpressions"] = selector["matchExpressions"]
    return GoText(orjson.dumps(ordered).decode())


def validate_job_selector(spec: Obj) -> list[FieldError]:
    """ValidateJobSpec's selector rules (a CronJob's job template has none)."""
    selector = spec.get("selector")
    errs: list[FieldError] = []
    if selector is None:
        errs.append(field.required("spec.selector"))
    else:
        errs += validate_label_selector(selector, "spec.selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if not _matches(selector, labels or {}):
        why = "`selector` does not match template `labels`"
        errs.append(field.invalid(f"{TEMPLATE}.labels", labels, why))
    return errs
