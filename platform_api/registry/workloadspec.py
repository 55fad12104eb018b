"""apps/v1 workload specs: kube's ``ValidateDeploymentSpec`` and the template rules every
replicated workload shares (``ValidatePodTemplateSpecForReplicaSet``), in its order and
words."""

from __future__ import annotations

from typing import Any

from platform_api.registry.podspec import validate_pod_spec
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.labelselector import validate_label_selector

Obj = dict[str, Any]
NONNEGATIVE = "must be greater than or equal to 0"
STRATEGIES = ["Recreate", "RollingUpdate"]


def nonnegative(path: str, value: Any) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if isinstance(value, int) and value < 0:
        return [field.invalid(path, value, NONNEGATIVE)]
    return []


def validate_selector_and_template(spec: Obj, owner: str) -> list[FieldError]:
    """The selector (required, valid, not empty) and a template it matches, whose pods
    restart always.  ``owner`` names the kind in the empty-selector message."""
    errs: list[FieldError] = []
    selector = spec.get("selector")
    if selector is None:
        errs.append(field.required("spec.selector"))
    else:
        errs += validate_label_selector(selector, "spec.selector")
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            detail = f"empty selector is invalid for {owner}"
            errs.append(field.invalid("spec.selector", selector, detail))
    try:
        # No selector selects nothing (kube's LabelSelectorAsSelector(nil)); an empty one
        # selects everything and is not matched against the template.
        matcher = label_selector_from(selector) if selector is not None else None
    except SelectorError:
        return [*errs, field.invalid("spec.selector", selector, "invalid label selector")]
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels")
    if matcher is None or (not matcher.empty() and not matcher.matches(labels or {})):
        at = "spec.template.metadata.labels"
        errs.append(field.invalid(at, labels, "`selector` does not match template `labels`"))
    pod = template.get("spec") or {}
    errs += validate_pod_spec(pod, "spec.template.spec")
    restart = pod.get("restartPolicy", "Always")
    if restart != "Always":
        path = "spec.template.spec.restartPolicy"
        errs.append(field.not_supported(path, restart, ["Always"]))
    if pod.get("activeDeadlineSeconds") is not None:
        path = "spec.template.spec.activeDeadlineSeconds"
        errs.append(field.forbidden(path, "activeDeadlineSeconds in ReplicaSet is not Supported"))
    return errs


def validate_deployment_spec(spec: Obj) -> list[FieldError]:
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    errs += validate_selector_and_template(spec, "deployment")
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
        return []
    # kube shows the internal struct, whose fields have no JSON names.
    shown = GoText(f'{{"Type":{field.go_quote(kind)},"RollingUpdate":{_go_json(rolling)}}}')
    return [field.not_supported("spec.strategy", shown, STRATEGIES)]


def _go_json(value: Any) -> str:
    return "null" if value is None else field.render_value(value)
