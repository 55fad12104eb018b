"""Strategies of the workload and policy groups: generation tracking, create-on-update."""

from __future__ import annotations

import orjson

from platform_api import errors
from platform_api.gotext import parse_int
from platform_api.registry.claimupdate import claim_spec_warnings
from platform_api.registry.defaults import defaults
from platform_api.registry.jobselector import (
    copy_template_labels,
    generate_selector,
    validate_generated_selector,
    validate_job_selector,
)
from platform_api.registry.jobstatusvalidation import validate_job_status_update
from platform_api.registry.jobupdate import (
    validate_cronjob_name,
    validate_indexed_hostname,
    validate_job_spec_update,
    with_job_template_rules,
)
from platform_api.registry.podwarnings import (
    WORKLOAD_NAME,
    generation_changed,
    job_spec_warnings,
    name_warnings,
    template_warnings,
)
from platform_api.registry.statefulsetspec import statefulset_changes, validate_statefulset_spec
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.registry.workloadspec import (
    validate_cronjob_spec,
    validate_daemonset_spec,
    validate_deployment_spec,
    validate_job_spec,
    validate_replicated_spec,
)
from platform_api.registry.workloadstatus import workload_status_errors
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.objectmeta import (
    validate_core_meta_update,
)


class WorkloadStrategy(GenericStrategy):
    """Controllers compare ``metadata.generation`` with ``status.observedGeneration``."""

    tracks_generation = True


class PodTemplateStrategy(WorkloadStrategy):
    """apps/v1 workloads: kube's spec rules (workloadspec.py), an immutable selector."""

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        kind = self.resource.kind
        if kind == "DaemonSet":
            return super().validate(obj) + validate_daemonset_spec(spec)
        if kind == "StatefulSet":
            return super().validate(obj) + validate_statefulset_spec(spec)
        return super().validate(obj) + validate_replicated_spec(kind, spec)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """The spec rules of a create hold for every update too (metadata has its own)
        and the selector is fixed, in each kind's order as kube's: a DaemonSet's fixed
        selector first; a StatefulSet's within the spec fields it may not change (its
        stored service name and claim templates tolerated)."""
        errs = super().validate_update(new, old)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        kind = self.resource.kind
        if kind == "StatefulSet":
            return (
                errs
                + validate_statefulset_spec(spec, update=True)
                + statefulset_changes(spec, old_spec)
            )
        selector = spec.get("selector")
        moved = (
            []
            if selector == old_spec.get("selector")
            else [field.invalid("spec.selector", selector, "field is immutable")]
        )
        rules = [e for e in self.validate(new) if not e.field.startswith("metadata.")]
        return errs + (moved + rules if kind == "DaemonSet" else rules + moved)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + workload_status_errors(self.resource.kind, new.get("status"))

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """kube's WarningsOnCreate/Update: the name (not a StatefulSet's or a
        DaemonSet's), then the template, on an update only if it changed the generation;
        a StatefulSet's claim templates and history limit every time."""
        spec = obj.get("spec") or {}
        warnings: list[str] = []
        if old is None and self.resource.kind not in ("StatefulSet", "DaemonSet"):
            warnings += name_warnings(obj, WORKLOAD_NAME)
        if old is None or self.template_changed(obj, old):
            warnings += template_warnings(spec.get("template"), "spec.template", self.gates)
        if self.resource.kind == "StatefulSet":
            warnings += _statefulset_warnings(spec, old is not None)
        return warnings

    def template_changed(self, new: Obj, old: Obj) -> bool:
        return generation_changed(new, old)


def _statefulset_warnings(spec: Obj, update: bool) -> list[str]:
    """Claim templates' fractions of a byte (an update's path names Go's ``Spec``, as
    kube's does), and a history limit that keeps everything."""
    warnings = []
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        at = f"spec.volumeClaimTemplates[{i}]" + (".Spec" if update else "")
        warnings += claim_spec_warnings(claim.get("spec") or {}, at)
    limit = spec.get("revisionHistoryLimit")
    if isinstance(limit, int) and limit < 0:
        warnings.append(
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; "
            "a value >= 0 is recommended"
        )
    return warnings


class DeploymentStrategy(PodTemplateStrategy):
    status_keeps_old_metadata: tuple[str, ...] = ("labels",)  # deploymentStatusStrategy

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """kube counts annotation changes too: the controller copies them to the
        ReplicaSets (so kubectl apply's last-applied annotation alone moves it)."""
        annotations = (new["metadata"].get("annotations") or {}) != (
            old["metadata"].get("annotations") or {}
        )
        return annotations or super().spec_changed(new, old)

    def validate(self, obj: Obj) -> list[FieldError]:
        return WorkloadStrategy.validate(self, obj) + validate_deployment_spec(
            obj.get("spec") or {}
        )


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


class DaemonSetStrategy(PodTemplateStrategy):
    """kube keeps a DaemonSet's template generation in its internal spec, which v1
    carries as an annotation: a create keeps a positive one it is given (else 1), an
    update keeps the stored one (one more when the template changed), a status write
    the stored one; older pods carry it as a label."""

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        _set_template_generation(obj, max(_template_generation(obj), 1))

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        _template_generation(new)  # the body's must convert, whatever becomes of it
        generation = _template_generation(old)
        template = (new.get("spec") or {}).get("template")
        if template != (old.get("spec") or {}).get("template"):
            generation += 1
        _set_template_generation(new, generation)

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        """kube's status strategy puts the stored spec back, its generation with it."""
        _template_generation(new)
        _set_template_generation(new, _template_generation(old))

    def template_changed(self, new: Obj, old: Obj) -> bool:
        """A DaemonSet's template generation, not its generation, decides."""
        return _template_generation(new) != _template_generation(old)


def _template_generation(obj: Obj) -> int:
    """The annotation as kube's v1 conversion reads it (``strconv.ParseInt``): a value
    that does not parse fails the body's decoding (400); none is 0."""
    annotations = obj["metadata"].get("annotations") or {}
    text = annotations.get(TEMPLATE_GENERATION)
    if text is None:
        return 0
    try:
        return parse_int(str(text))
    except ValueError as e:
        raise errors.bad_request(
            f'DaemonSet in version "v1" cannot be handled as a DaemonSet: {e}'
        ) from None


def _set_template_generation(obj: Obj, generation: int) -> None:
    obj["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = str(generation)


register("apps", "Deployment")(DeploymentStrategy)
register("apps", "DaemonSet")(DaemonSetStrategy)
for _kind in ("ReplicaSet", "StatefulSet"):
    register("apps", _kind)(PodTemplateStrategy)


class JobStrategy(WorkloadStrategy):
    # kube's batch/v1 default: a delete that names no policy leaves the pods, and says so
    default_propagation = "Orphan"
    default_propagation_warning: str | None = (
        "child pods are preserved by default when jobs are deleted; set "
        "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
        "suppress this warning"
    )

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        generate_selector(obj)

    def canonicalize(self, obj: Obj) -> None:
        copy_template_labels(obj)

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + _job_rules(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        # kube's ValidateJob(new) (the metadata as a create's), then ValidateJobUpdate:
        # the metadata as an update's, the spec again (its causes repeat), then what may
        # change (jobupdate.py).
        errs = self.validate_meta_update(new, old, "C") + _job_rules(new)
        errs += self.validate_meta_update(new, old, "U")
        return errs + _spec_rules(new) + validate_job_spec_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + validate_job_status_update(new, old)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        if old is not None and not generation_changed(obj, old):
            return []
        names = name_warnings(obj, WORKLOAD_NAME) if old is None else []
        return names + job_spec_warnings(obj.get("spec") or {}, "spec", self.gates)


def _job_rules(job: Obj) -> list[FieldError]:
    """kube's ValidateJob after the metadata: the generated selector, the spec, and the
    hostname of an Indexed Job's last pod."""
    errs = validate_generated_selector(job) + _spec_rules(job)
    return errs + validate_indexed_hostname(job)


def _spec_rules(job: Obj) -> list[FieldError]:
    spec = job.get("spec") or {}
    return validate_job_spec(spec) + validate_job_selector(spec)


register("batch", "Job")(JobStrategy)


@register("batch", "CronJob")
class CronJobStrategy(WorkloadStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj) + _cronjob_spec_rules(obj.get("spec") or {})
        return errs + validate_cronjob_name(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        return super().validate_update(new, old) + _cronjob_spec_rules(spec, old_spec)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's CronJob status strategy checks nothing itself (the generic update
        checks still run)."""
        return []

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """The job template's warnings; an update's schedule that names a zone (kube's
        path says ``spec.spec``)."""
        spec = obj.get("spec") or {}
        job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
        at = "spec.jobTemplate.spec"
        if old is None:
            return name_warnings(obj, WORKLOAD_NAME) + job_spec_warnings(job_spec, at, self.gates)
        warnings = (
            job_spec_warnings(job_spec, at, self.gates) if generation_changed(obj, old) else []
        )
        if "TZ" in str(spec.get("schedule") or ""):
            warnings.append(
                "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more "
                "details"
            )
        return warnings


def _cronjob_spec_rules(spec: Obj, old_spec: Obj | None = None) -> list[FieldError]:
    """validateCronJobSpec, the job template's selector rules included."""
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return with_job_template_rules(validate_cronjob_spec(spec, old_spec), job_spec)


class CreateOnUpdateStrategy(GenericStrategy):
    """Kinds kube lets a PUT create (leader-election leases and their candidates)."""

    allow_create_on_update = True
    core_metadata_checks = False  # coordination's: apimachinery's ValidateObjectMeta(Update)


@defaults("apps", "ControllerRevision")
def _controller_revision(obj: Obj) -> None:
    obj.setdefault("revision", 0)  # an int64 without omitempty: always written


@register("apps", "ControllerRevision")
class ControllerRevisionStrategy(GenericStrategy):
    """kube's ValidateControllerRevisionCreate/Update: a JSON object as ``data``, never
    changed; a non-negative ``revision``, which may change."""

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj) + field.nonnegative("revision", obj.get("revision"))
        data = obj.get("data")
        if data is None:
            errs.append(field.required("data", "data is mandatory"))
        elif not isinstance(data, dict):
            errs.append(field.required("data", "data must be a valid JSON object"))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        errs += field.nonnegative("revision", new.get("revision"))
        if new.get("data") != old.get("data"):
            shown = GoText(orjson.dumps(new.get("data")).decode())
            errs.append(field.invalid("data", shown, "field is immutable"))
        return errs
