"""PodDisruptionBudgets and Leases: kube's spec rules for the budgets workloads are
drained against and the locks controllers elect leaders with."""

from __future__ import annotations

from platform_api.registry.apps import CreateOnUpdateStrategy, WorkloadStrategy
from platform_api.registry.gointernal import go_text
from platform_api.registry.strategy import Obj, SpecChecked, register
from platform_api.registry.workloadspec import int_or_percent, over_100_percent
from platform_api.validation import field
from platform_api.validation.conditions import validate_conditions
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector

EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]


def validate_budget_spec(spec: Obj) -> list[FieldError]:
    """kube's ValidatePodDisruptionBudgetSpec."""
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        detail = "minAvailable and maxUnavailable cannot be both set"
        errs.append(field.invalid("spec", go_text("policy.PodDisruptionBudgetSpec", spec), detail))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            errs += int_or_percent(spec[key], f"spec.{key}")
            errs += over_100_percent(spec[key], f"spec.{key}")
    if spec.get("selector") is not None:
        errs += validate_label_selector(spec["selector"], "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        at = "spec.unhealthyPodEvictionPolicy"
        errs.append(field.not_supported(at, policy, EVICTION_POLICIES))
    return errs


def validate_lease_spec(spec: Obj) -> list[FieldError]:
    """kube's ValidateLeaseSpec for the counts."""
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(field.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    errs += field.nonnegative("spec.leaseTransitions", spec.get("leaseTransitions"))
    return errs


@register("policy", "PodDisruptionBudget")
class PodDisruptionBudgetStrategy(SpecChecked, WorkloadStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces
    update_meta_checks = ""  # kube validates only the generic update checks' metadata
    validates_metadata = False  # ...and on a create only once the spec passes
    check = staticmethod(validate_budget_spec)

    def validate(self, obj: Obj) -> list[FieldError]:
        """kube's ValidatePodDisruptionBudget: the spec alone (BeforeCreate then checks
        the metadata)."""
        return validate_budget_spec(obj.get("spec") or {})

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's ValidatePodDisruptionBudgetStatusUpdate: standard conditions, counts
        that are not negative (the metadata only by the generic update checks)."""
        errs: list[FieldError] = []
        status = new.get("status") or {}
        errs += validate_conditions(status.get("conditions"), "status.conditions")
        for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            errs += field.nonnegative(f"status.{key}", status.get(key))
        return errs


@register("coordination.platform.io", "Lease")
class LeaseStrategy(SpecChecked, CreateOnUpdateStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces
    check = staticmethod(validate_lease_spec)


# A LeaseCandidate (coordinated leader election) is PUT by its candidate as a Lease is.
register("coordination.platform.io", "LeaseCandidate")(CreateOnUpdateStrategy)
