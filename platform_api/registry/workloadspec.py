"""apps/v1 workload specs: kube's ``ValidateDeploymentSpec`` and the template rules every
replicated workload shares (``ValidatePodTemplateSpecForReplicaSet``), in its order and
words."""

from __future__ import annotations

import copy
import re
from typing import Any

from platform_api.codec.goshape import STORED, shaper
from platform_api.gotext import json_string, object_json
from platform_api.registry.cronschedule import schedule_errors, time_zone_errors
from platform_api.registry.jobcounts import validate_job_counts, validate_success_policy_mode
from platform_api.registry.jobpolicies import (
    validate_managed_by,
    validate_pod_failure_policy,
    validate_pod_replacement_policy,
)
from platform_api.registry.podannotations import annotation_errors, field_match_errors
from platform_api.registry.podspec import validate_pod_spec
from platform_api.selectors import LabelSelector, SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText, nonnegative
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    regex_error,
    validate_annotations,
    validate_labels,
)

Obj = dict[str, Any]
_PERCENT = re.compile(r"^[0-9]+%\Z")
_PERCENT_ERROR = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)
STRATEGIES = ["Recreate", "RollingUpdate"]
_LABEL_SELECTOR = "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector"


def validate_selector_and_template(spec: Obj, owner: str, kind: str) -> list[FieldError]:
    """The selector (required, valid, not empty) and a template it matches, whose pods
    restart always.  ``owner`` names the kind in the empty-selector message (a
    ReplicaSet's says "deployment", as kube's does), ``kind`` in the deadline one."""
    errs: list[FieldError] = []
    selector = spec.get("selector")
    if selector is None:
        errs.append(field.required("spec.selector"))
    else:
        errs += validate_label_selector(selector, "spec.selector")
        errs += _empty_selector(selector, owner)
    try:
        # No selector selects nothing (kube's LabelSelectorAsSelector(nil)); an empty one
        # selects everything and is not matched against the template.
        matcher = label_selector_from(selector) if selector is not None else None
    except SelectorError:  # kube's StatefulSet check gives no reason
        why = "" if kind == "StatefulSet" else "invalid label selector"
        return [*errs, field.invalid("spec.selector", _as_struct(selector), why)]
    return errs + _matching_template(spec, matcher) + _template(spec, kind)


def _as_struct(selector: Obj | None) -> Any:
    """A LabelSelector as Go prints the struct (matchLabels before matchExpressions,
    a requirement's key, operator, values), not as a map with sorted keys."""
    if not isinstance(selector, dict):
        return selector
    ordered = copy.deepcopy(selector)
    shaper(_LABEL_SELECTOR)(ordered, STORED)
    return GoText(object_json(ordered).decode())


def _empty_selector(selector: Obj, owner: str) -> list[FieldError]:
    if selector.get("matchLabels") or selector.get("matchExpressions"):
        return []
    shown = _as_struct(selector)  # Go's struct: an empty matchLabels is omitted
    return [field.invalid("spec.selector", shown, f"empty selector is invalid for {owner}")]


def _matching_template(spec: Obj, matcher: LabelSelector | None) -> list[FieldError]:
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if matcher is None or (not matcher.empty() and not matcher.matches(labels or {})):
        at = "spec.template.metadata.labels"
        return [field.invalid(at, labels, "`selector` does not match template `labels`")]
    return []


def validate_pod_template(template: Obj, path: str) -> list[FieldError]:
    """kube's ValidatePodTemplateSpec: the template's labels and annotations (at
    ``<path>.labels``, not ``.metadata``), then its pod spec."""
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    annotations = meta.get("annotations") or {}
    errs = validate_labels(meta.get("labels") or {}, f"{path}.labels")
    errs += validate_annotations(annotations, f"{path}.annotations")
    errs += annotation_errors(annotations, spec, f"{path}.annotations")
    errs += validate_pod_spec(spec, f"{path}.spec")
    errs += field_match_errors(annotations, spec, f"{path}.spec")
    if spec.get("ephemeralContainers"):
        detail = "ephemeral containers not allowed in pod template"
        errs.append(field.forbidden(f"{path}.spec.ephemeralContainers", detail))
    return errs


def _template(spec: Obj, kind: str) -> list[FieldError]:
    """The pod template of a replicated workload: valid, restarting always, no deadline."""
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    errs = validate_pod_template(template, "spec.template")
    restart = pod.get("restartPolicy", "Always")
    if restart != "Always":
        path = "spec.template.spec.restartPolicy"
        errs.append(field.not_supported(path, restart, ["Always"]))
    deadline = pod.get("activeDeadlineSeconds")
    if deadline is not None:
        path, detail = (
            "spec.template.spec.activeDeadlineSeconds",
            f"activeDeadlineSeconds in {kind} is not Supported",
        )
        errs.append(
            field.invalid(path, deadline, detail)
            if kind == "DaemonSet"
            else field.forbidden(path, detail)
        )
    return errs


def validate_replicated_spec(kind: str, spec: Obj) -> list[FieldError]:
    """ReplicaSets' and Deployments' shared rules (their own update strategies aside)."""
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    owner = "deployment" if kind == "ReplicaSet" else kind.lower()
    return errs + validate_selector_and_template(spec, owner, kind)


# The internal structs of the kinds' rolling updates: (Go field, JSON field, the zero
# Go writes when it is absent: 0 for a value, None for a pointer).
Rolling = tuple[tuple[str, str, Any], ...]
SURGE_ROLLING: Rolling = (("MaxUnavailable", "maxUnavailable", 0), ("MaxSurge", "maxSurge", 0))


def go_strategy(strategy: Obj, rolling_fields: Rolling) -> GoText:
    """An update strategy as kube shows it in a message: its internal struct, whose
    fields have no JSON names (``{"Type":"Foo","RollingUpdate":null}``)."""
    kind = strategy.get("type", "")
    return GoText(
        f'{{"Type":{json_string(kind)},'
        f'"RollingUpdate":{go_rolling(strategy.get("rollingUpdate"), rolling_fields)}}}'
    )


def go_rolling(rolling: Any, rolling_fields: Rolling) -> GoText:
    if not isinstance(rolling, dict):
        return GoText(_go_json(rolling))
    parts = [f'"{go}":{_go_json(rolling.get(key, zero))}' for go, key, zero in rolling_fields]
    return GoText("{" + ",".join(parts) + "}")


def validate_daemonset_spec(spec: Obj) -> list[FieldError]:
    """kube's ``ValidateDaemonSetSpec`` (its update strategy aside): no selector selects
    nothing, so a missing one shows only as a template it does not match."""
    selector = spec.get("selector")
    errs = validate_label_selector(selector, "spec.selector")
    try:
        matcher = label_selector_from(selector) if selector is not None else None
    except SelectorError:
        matcher = None
    else:
        errs += _matching_template(spec, matcher)
    if selector is not None:
        errs += _empty_selector(selector, "daemonset")
    errs += _template(spec, "DaemonSet")
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    strategy = spec.get("updateStrategy") or {}
    kind = strategy.get("type", "")
    if kind == "RollingUpdate" and strategy.get("rollingUpdate") is None:
        errs.append(field.required("spec.updateStrategy.rollingUpdate"))
    elif kind == "RollingUpdate":
        errs += _daemonset_rolling(strategy["rollingUpdate"], "spec.updateStrategy.rollingUpdate")
    elif kind not in ("RollingUpdate", "OnDelete"):
        allowed = ["RollingUpdate", "OnDelete"]
        shown = go_strategy(strategy, SURGE_ROLLING)
        errs.append(field.not_supported("spec.updateStrategy", shown, allowed))
    return errs + nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))


def _daemonset_rolling(rolling: Obj, at: str) -> list[FieldError]:
    """kube's ValidateRollingUpdateDaemonSet: counts or percents up to 100%, and
    exactly one of maxUnavailable and maxSurge non-zero."""
    unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
    errs = int_or_percent(unavailable, f"{at}.maxUnavailable")
    errs += int_or_percent(surge, f"{at}.maxSurge")
    errs += over_100_percent(unavailable, f"{at}.maxUnavailable")
    errs += over_100_percent(surge, f"{at}.maxSurge")
    if _amount(unavailable) and _amount(surge):
        detail = "may not be set when maxUnavailable is non-zero"
        errs.append(field.invalid(f"{at}.maxSurge", surge, detail))
    elif not _amount(unavailable) and not _amount(surge):
        errs.append(field.required(f"{at}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def validate_deployment_spec(spec: Obj) -> list[FieldError]:
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    errs += validate_selector_and_template(spec, "deployment", "ReplicaSet")
    errs += _strategy(spec.get("strategy") or {})
    min_ready = spec.get("minReadySeconds") or 0
    errs += nonnegative("spec.minReadySeconds", min_ready)
    errs += nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errs += nonnegative("spec.progressDeadlineSeconds", deadline)
        if deadline <= min_ready:
            detail = "must be greater than minReadySeconds"
            errs.append(field.invalid("spec.progressDeadlineSeconds", deadline, detail))
    return errs


def _strategy(strategy: Obj) -> list[FieldError]:
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            detail = "may not be specified when strategy `type` is 'Recreate'"
            return [field.forbidden("spec.strategy.rollingUpdate", detail)]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            detail = "this should be defaulted and never be nil"
            return [field.required("spec.strategy.rollingUpdate", detail)]
        return _rolling_update(rolling, "spec.strategy.rollingUpdate")
    return [field.not_supported("spec.strategy", go_strategy(strategy, SURGE_ROLLING), STRATEGIES)]


def _rolling_update(rolling: Obj, at: str) -> list[FieldError]:
    """``ValidateRollingUpdateDeployment``: counts or percents, not both zero, and no
    more than all pods unavailable."""
    unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
    errs = int_or_percent(unavailable, f"{at}.maxUnavailable")
    errs += int_or_percent(surge, f"{at}.maxSurge")
    if _amount(unavailable) == 0 and _amount(surge) == 0:
        detail = "may not be 0 when `maxSurge` is 0"
        errs.append(field.invalid(f"{at}.maxUnavailable", unavailable, detail))
    errs += over_100_percent(unavailable, f"{at}.maxUnavailable")
    return errs


def int_or_percent(value: Any, at: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a count that is not negative, or a percent."""
    if isinstance(value, str):  # an IntOrString: its bad value is marshalled as JSON
        return (
            [] if _PERCENT.match(value) else [field.invalid(at, field.named(value), _PERCENT_ERROR)]
        )
    return nonnegative(at, value)


def over_100_percent(value: Any, at: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``."""
    if isinstance(value, str) and _PERCENT.match(value) and _amount(value) > 100:
        return [field.invalid(at, value, "must not be greater than 100%")]
    return []


def _amount(value: Any) -> int:
    """kube's ``getIntOrPercentValue``: a percent's number, else the string as
    strconv.Atoi reads it (``"-1"`` is -1; what it cannot read is 0, past int64 the
    bound it clamps to)."""
    if isinstance(value, str):
        if _PERCENT.match(value):
            return int(value[:-1])
        if not _ATOI.fullmatch(value):
            return 0
        return max(-(2**63), min(int(value), 2**63 - 1))
    return value if isinstance(value, int) else 0


_ATOI = re.compile(r"[+-]?[0-9]+")


def _go_json(value: Any) -> str:
    return "null" if value is None else field.render_value(value)


COMPLETION_MODES = ["NonIndexed", "Indexed"]


def validate_job_spec(spec: Obj, path: str = "spec") -> list[FieldError]:
    """kube's ``ValidateJobSpec`` for the counts and the template (its pods may not
    restart always: a Job's pods finish); ``path`` is a CronJob's job template's."""
    errs: list[FieldError] = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit"):
        errs += nonnegative(f"{path}.{name}", spec.get(name))
    errs += nonnegative(f"{path}.ttlSecondsAfterFinished", spec.get("ttlSecondsAfterFinished"))
    errs += nonnegative(f"{path}.backoffLimitPerIndex", spec.get("backoffLimitPerIndex"))
    errs += nonnegative(f"{path}.maxFailedIndexes", spec.get("maxFailedIndexes"))
    errs += validate_managed_by(spec.get("managedBy"), f"{path}.managedBy")
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        errs.append(field.not_supported(f"{path}.completionMode", mode, COMPLETION_MODES))
    errs += validate_job_counts(spec, path)
    errs += validate_pod_failure_policy(spec, f"{path}.podFailurePolicy")
    errs += validate_success_policy_mode(spec, path)
    errs += validate_pod_replacement_policy(spec, f"{path}.podReplacementPolicy")
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    errs += validate_pod_template(template, f"{path}.template")
    restart = pod.get("restartPolicy", "Always")
    where = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):  # Always is also the default of an unset one
        errs.append(field.required(where, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(field.not_supported(where, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        detail = 'only "Never" is supported when podFailurePolicy is specified'
        errs.append(field.invalid(f"{path}.template.spec.restartPolicy", restart, detail))
    return errs


CONCURRENCY = ["Allow", "Forbid", "Replace"]


def validate_cronjob_spec(spec: Obj, old: Obj | None = None) -> list[FieldError]:
    """kube's ``validateCronJobSpec``, in its order.  An update may keep a schedule's
    TZ prefix its object already had, and a time zone it does not change."""
    schedule = spec.get("schedule", "")
    errs: list[FieldError] = []
    if not schedule:
        errs.append(field.required("spec.schedule"))
    else:
        problems = schedule_errors(schedule)
        if old is not None and "TZ" in old.get("schedule", ""):
            problems = [p for p in problems if "TZ or CRON_TZ" not in p]
        errs += [field.invalid("spec.schedule", schedule, m) for m in problems]
    errs += nonnegative("spec.startingDeadlineSeconds", spec.get("startingDeadlineSeconds"))
    zone = spec.get("timeZone")
    if zone is not None and (old is None or old.get("timeZone") != zone):
        errs += [field.invalid("spec.timeZone", zone, m) for m in time_zone_errors(zone)]
    policy = spec.get("concurrencyPolicy", "Allow")
    if policy not in CONCURRENCY:
        errs.append(field.not_supported("spec.concurrencyPolicy", policy, CONCURRENCY))
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    errs += validate_job_spec(job, "spec.jobTemplate.spec")
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs += nonnegative(f"spec.{name}", spec.get(name))
    return errs


def validate_rc_spec(spec: Obj) -> list[FieldError]:
    """kube's ValidateReplicationControllerSpec: a non-empty selector (a map) that the
    template's labels match, and a template whose pods restart always, without deadline."""
    errs = nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    selector = spec.get("selector") or {}
    if not selector:
        errs.append(field.required("spec.selector"))
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    template = spec.get("template")
    if not isinstance(template, dict):
        return [*errs, field.required("spec.template")]
    labels = (template.get("metadata") or {}).get("labels")
    if selector and any((labels or {}).get(k) != v for k, v in selector.items()):
        why = "`selector` does not match template `labels`"
        errs.append(field.invalid("spec.template.metadata.labels", labels, why))
    errs += validate_pod_template(template, "spec.template")
    pod = template.get("spec") or {}
    if pod.get("restartPolicy", "Always") != "Always":
        path = "spec.template.spec.restartPolicy"
        errs.append(field.not_supported(path, pod.get("restartPolicy"), ["Always"]))
    if pod.get("activeDeadlineSeconds") is not None:
        why = "activeDeadlineSeconds in ReplicationController is not Supported"
        errs.append(field.forbidden("spec.template.spec.activeDeadlineSeconds", why))
    return errs
