"""Strategies of the workload and policy groups: generation tracking, create-on-update."""

from __future__ import annotations

from platform_api.registry.podspec import selector_matches, validate_pod_spec
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.registry.workloadspec import validate_deployment_spec
from platform_api.validation import field
from platform_api.validation.field import FieldError


class WorkloadStrategy(GenericStrategy):
    """Controllers compare ``metadata.generation`` with ``status.observedGeneration``."""

    tracks_generation = True


class PodTemplateStrategy(WorkloadStrategy):
    """apps/v1 workloads: a required, immutable selector that matches the template."""

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        selector = spec.get("selector")
        if not selector:
            errs.append(field.required("spec.selector"))
        else:
            labels = (template.get("metadata") or {}).get("labels") or {}
            if not selector_matches(selector, labels):
                errs.append(
                    field.invalid(
                        "spec.template.metadata.labels",
                        labels,
                        "`selector` does not match template `labels`",
                    )
                )
        return errs + validate_pod_spec(template.get("spec") or {}, "spec.template.spec")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        # The spec rules of a create hold for every update too (metadata has its own).
        errs += [e for e in self.validate(new) if not e.field.startswith("metadata.")]
        selector = (new.get("spec") or {}).get("selector")
        if selector != (old.get("spec") or {}).get("selector"):
            errs.append(field.invalid("spec.selector", selector, "field is immutable"))
        return errs


class DeploymentStrategy(PodTemplateStrategy):
    status_keeps_old_metadata: tuple[str, ...] = ("labels",)  # deploymentStatusStrategy

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = WorkloadStrategy.validate(self, obj)  # metadata; the spec is kube's rules
        return errs + validate_deployment_spec(obj.get("spec") or {})


register("apps", "Deployment")(DeploymentStrategy)
for _kind in ("ReplicaSet", "StatefulSet", "DaemonSet"):
    register("apps", _kind)(PodTemplateStrategy)

for _group, _kind in (
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("policy", "PodDisruptionBudget"),
    ("networking.platform.io", "NetworkPolicy"),
    ("networking.platform.io", "Ingress"),
):
    register(_group, _kind)(WorkloadStrategy)


class CreateOnUpdateStrategy(GenericStrategy):
    """Kinds kube lets a PUT create (leader-election leases, RBAC reconcilers)."""

    allow_create_on_update = True


for _group, _kind in (
    ("coordination.platform.io", "Lease"),
    ("rbac.authorization.platform.io", "Role"),
    ("rbac.authorization.platform.io", "ClusterRole"),
    ("rbac.authorization.platform.io", "RoleBinding"),
    ("rbac.authorization.platform.io", "ClusterRoleBinding"),
):
    register(_group, _kind)(CreateOnUpdateStrategy)
