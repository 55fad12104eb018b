"""apps/v1 workload specs: kube's ``ValidateDeploymentSpec`` and the template rules every
replicated workload shares (``ValidatePodTemplateSpecForReplicaSet``), in its order and
words."""

from __future__ import annotations

import re
from typing import Any

from platform_api.registry.claimspec import validate_claim_spec
from platform_api.registry.cronschedule import schedule_errors, time_zone_errors
from platform_api.registry.jobcounts import validate_job_counts, validate_success_policy_mode
from platform_api.registry.jobpolicies import (
    validate_managed_by,
    validate_pod_failure_policy,
    validate_pod_replacement_policy,
)
from platform_api.registry.podspec import validate_pod_spec
from platform_api.selectors import LabelSelector, SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText, nonnegative
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    is_dns1123_label,
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
RETENTION_POLICIES = ["Retain", "Delete"]  # kube lists them unsorted


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
    except SelectorError:
        return [*errs, field.invalid("spec.selector", selector, "invalid label selector")]
    return errs + _matching_template(spec, matcher) + _template(spec, kind)


def _empty_selector(selector: Obj, owner: str) -> list[FieldError]:
    if selector.get("matchLabels") or selector.get("matchExpressions"):
        return []
    return [field.invalid("spec.selector", selector, f"empty selector is invalid for {owner}")]


def _matching_template(spec: Obj, matcher: LabelSelector | None) -> list[FieldError]:
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if matcher is None or (not matcher.empty() and not matcher.matches(labels or {})):
        at = "spec.template.metadata.labels"
        return [field.invalid(at, labels, "`selector` does not match template `labels`")]
    return []


def validate_pod_template(template: Obj, path: str) -> list[FieldError]:
    """kube's ValidatePodTemplateSpec: the template's labels and annotations (at
    ``<path>.labels``, not ``.metadata``), then its pod spec."""
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels") or {}, f"{path}.labels")
    errs += validate_annotations(meta.get("annotations") or {}, f"{path}.annotations")
    return errs + validate_pod_spec(template.get("spec") or {}, f"{path}.spec")


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


def validate_statefulset_spec(spec: Obj, update: bool = False) -> list[FieldError]:
    """kube's ValidateStatefulSetSpec, in its order.  An ``update`` tolerates the service
    name and claim templates stored before (both immutable)."""
    errs = _pod_management(spec.get("podManagementPolicy", ""))
    errs += _statefulset_strategy(spec.get("updateStrategy") or {})
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            value = retention.get(key, "")
            if value not in RETENTION_POLICIES:
                at = f"spec.persistentVolumeClaimRetentionPolicy.{key}"
                errs.append(field.not_supported(at, value, RETENTION_POLICIES))
    claims = [c for c in spec.get("volumeClaimTemplates") or [] if isinstance(c, dict)]
    if not update:
        for i, claim in enumerate(claims):
            errs += validate_claim_spec(
                claim.get("spec") or {}, f"spec.volumeClaimTemplates[{i}].spec"
            )
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs += nonnegative("spec.ordinals.start", ordinals.get("start"))
    service = spec.get("serviceName") or ""
    if service and not update:
        errs += [field.invalid("spec.serviceName", service, m) for m in is_dns1123_label(service)]
    return errs + validate_selector_and_template(
        _as_validated(spec, claims), "statefulset", "StatefulSet"
    )


# What an update may change in a StatefulSet's spec (kube's ValidateStatefulSetUpdate).
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def statefulset_changes(spec: Obj, old: Obj) -> list[FieldError]:
    """Any change outside the fields a StatefulSet's update may change is refused."""
    fixed = [key for key in {**spec, **old} if key not in _STATEFULSET_MUTABLE]
    if all(spec.get(key) == old.get(key) for key in fixed):
        return []
    why = (
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
        "'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    return [field.forbidden("spec", why)]


def _pod_management(policy: str) -> list[FieldError]:
    if not policy:
        return [field.required("spec.podManagementPolicy")]
    if policy not in ("OrderedReady", "Parallel"):
        detail = "must be 'OrderedReady' or 'Parallel'"
        return [field.invalid("spec.podManagementPolicy", policy, detail)]
    return []


def _statefulset_strategy(strategy: Obj) -> list[FieldError]:
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    if not kind:
        return [field.required("spec.updateStrategy")]
    if kind == "OnDelete" and rolling is not None:
        detail = "only allowed for updateStrategy 'RollingUpdate'"
        return [field.invalid("spec.updateStrategy.rollingUpdate", _go_rolling(rolling), detail)]
    if kind == "RollingUpdate" and rolling is not None:
        return nonnegative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
    if kind not in ("RollingUpdate", "OnDelete"):
        detail = "must be 'RollingUpdate' or 'OnDelete'"
        return [field.invalid("spec.updateStrategy", _go_strategy(strategy), detail)]
    return []


def _as_validated(spec: Obj, claims: list[Obj]) -> Obj:
    """The spec whose template kube validates: without hostname and subdomain (the
    controller sets them), with a claim volume per claim template first (the
    template's own of those names dropped)."""
    pod = dict((spec.get("template") or {}).get("spec") or {})
    if not (pod.get("hostname") or pod.get("subdomain") or claims):
        return spec
    pod.pop("hostname", None)
    pod.pop("subdomain", None)
    names = [(c.get("metadata") or {}).get("name", "") for c in claims]
    added = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in dict.fromkeys(names)]
    if claims:
        kept = [v for v in pod.get("volumes") or [] if (v or {}).get("name") not in names]
        pod["volumes"] = added + kept
    template = {**(spec.get("template") or {}), "spec": pod}
    return {**spec, "template": template}


def _go_strategy(strategy: Obj) -> GoText:
    """An update strategy as kube shows it: its internal struct, fields unnamed in JSON."""
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    return GoText(f'{{"Type":{field.go_quote(kind)},"RollingUpdate":{_go_rolling(rolling)}}}')


def _go_rolling(rolling: Any) -> GoText:
    """A StatefulSet's rolling update as its internal struct (``null`` when absent)."""
    if not isinstance(rolling, dict):
        return GoText(_go_json(rolling))
    partition = rolling.get("partition") or 0
    surge = _go_json(rolling.get("maxUnavailable"))
    return GoText(f'{{"Partition":{partition},"MaxUnavailable":{surge}}}')


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
        errs.append(field.not_supported("spec.updateStrategy", _go_strategy(strategy), allowed))
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
    # kube shows the internal struct, whose fields have no JSON names.
    shown = GoText(f'{{"Type":{field.go_quote(kind)},"RollingUpdate":{_go_json(rolling)}}}')
    return [field.not_supported("spec.strategy", shown, STRATEGIES)]


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
    if isinstance(value, str):
        return [] if _PERCENT.match(value) else [field.invalid(at, value, _PERCENT_ERROR)]
    return nonnegative(at, value)


def over_100_percent(value: Any, at: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``."""
    if isinstance(value, str) and _PERCENT.match(value) and _amount(value) > 100:
        return [field.invalid(at, value, "must not be greater than 100%")]
    return []


def _amount(value: Any) -> int:
    """kube's ``getIntOrPercentValue``: the number, with a percent's sign dropped."""
    if isinstance(value, str):
        digits = value.removesuffix("%")
        return int(digits) if digits.isdigit() else 0
    return value if isinstance(value, int) else 0


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
    if restart not in ("OnFailure", "Never"):
        detail = 'valid values: "OnFailure", "Never"'
        errs.append(field.required(f"{path}.template.spec.restartPolicy", detail))
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
