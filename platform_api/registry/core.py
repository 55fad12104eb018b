"""Strategies of core/v1 kinds whose rules differ from the generic ones."""

from __future__ import annotations

from datetime import UTC, datetime

from platform_api.registry import requester
from platform_api.registry.claimspec import validate_claim_spec
from platform_api.registry.claimupdate import (
    claim_warnings,
    prepare_data_sources,
    validate_claim_status,
    validate_claim_update,
)
from platform_api.registry.gateddrops import RELAXED_SERVICE_NAMES, drop_disabled
from platform_api.registry.lbstatus import validate_service_status
from platform_api.registry.podannotations import (
    annotation_errors,
    annotation_update_errors,
    deletion_cost,
    field_match_errors,
    sync_apparmor,
)
from platform_api.registry.podephemeral import created_with_ephemeral
from platform_api.registry.podqos import pod_qos
from platform_api.registry.podresize import PodResizeStrategy
from platform_api.registry.podscheduling import merge_label_keys
from platform_api.registry.podspec import validate_pod_spec
from platform_api.registry.podstatus import (
    prepare_pod_status_update,
    validate_pod_status_update,
)
from platform_api.registry.podupdate import (
    plain,
    validate_ephemeral_update,
    validate_pod_update,
)
from platform_api.registry.podwarnings import (
    WORKLOAD_NAME,
    generation_changed,
    name_warnings,
    pod_warnings,
    template_warnings,
)
from platform_api.registry.pvvalidation import (
    pv_warnings,
    stamp_phase_transition,
    validate_pv,
    validate_pv_update,
)
from platform_api.registry.serviceips import normalize, prepare_update
from platform_api.registry.servicespec import (
    health_check_update_errors,
    load_balancer_class_update_errors,
    validate_cluster_ips_update,
    validate_service,
)
from platform_api.registry.strategy import (
    GenericStrategy,
    Obj,
    SpecChecked,
    StatusStrategy,
    Strategy,
    register,
    revert_to_old,
)
from platform_api.registry.workloadspec import validate_pod_template, validate_rc_spec
from platform_api.registry.workloadstatus import workload_status_errors
from platform_api.timestamps import format_time
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import (
    validate_core_meta_update,
    validate_object_meta_update,
)


def gated_condition(now: str) -> Obj:
    """What kube's pod strategy says of a pod created with scheduling gates: the
    scheduler will not look at it until they are gone."""
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": now,
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
    }


ANNOTATIONS = "metadata.annotations"


@register("", "Pod")
class PodStrategy(GenericStrategy):
    update_meta_checks = "UC"
    returns_deleted_object = True
    tracks_generation = True
    # Old kubelets corrupted them: kube's podStatusStrategy keeps the stored ones.
    status_keeps_old_metadata: tuple[str, ...] = ("ownerReferences",)
    initial_status = {"phase": "Pending", "qosClass": "BestEffort"}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        for text in sync_apparmor(obj):  # warned of as kube's PrepareForCreate warns
            requester.warn(text)
        merge_label_keys(obj)
        obj["status"]["qosClass"] = pod_qos(obj)  # kube's ComputePodQOS
        if (obj.get("spec") or {}).get("schedulingGates"):
            obj["status"]["conditions"] = [gated_condition(obj["metadata"]["creationTimestamp"])]

    def validate(self, obj: Obj) -> list[FieldError]:
        """kube's ValidatePodCreate: metadata, the pod's annotations, its spec, what a
        create may not set, then annotations and fields that must agree."""
        spec, meta = obj.get("spec") or {}, obj["metadata"]
        annotations = meta.get("annotations") or {}
        errs = super().validate(obj) + annotation_errors(annotations, spec, ANNOTATIONS)
        errs += validate_pod_spec(spec, "spec", meta.get("name", ""))
        return errs + created_with_ephemeral(spec) + field_match_errors(annotations, spec, "spec")

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return pod_warnings(obj, old, self.gates)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec = new.get("spec") or {}
        annotations = new["metadata"].get("annotations") or {}
        allow_cost = deletion_cost(old["metadata"].get("annotations") or {}) is None
        errs = super().validate_update(new, old)
        errs += annotation_errors(annotations, spec, ANNOTATIONS, allow_cost)
        errs += validate_pod_spec(spec, "spec", new["metadata"].get("name", ""))
        errs += annotation_update_errors(new, old, ANNOTATIONS)
        return errs + validate_pod_update(spec, old.get("spec") or {})

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        prepare_pod_status_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        errs += annotation_update_errors(new, old, ANNOTATIONS)
        return errs + validate_pod_status_update(new, old)

    def deletion_grace(self, obj: Obj, requested: int | None) -> int | None:
        """kube's podStrategy.CheckGracefulDelete: the caller's period, else the pod's
        ``terminationGracePeriodSeconds``; none for a pod never scheduled or finished
        (nothing runs it: it goes at once)."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Failed", "Succeeded"):
            return 0
        if requested is not None:
            return requested
        period = spec.get("terminationGracePeriodSeconds")
        return period if isinstance(period, int) else 0

    def subresource_strategies(self) -> dict[str, Strategy]:
        return {
            "binding": PodBindingStrategy(self),
            "ephemeralcontainers": EphemeralContainersStrategy(self),
            "resize": PodResizeStrategy(self),
        }


class PodBindingStrategy(StatusStrategy):
    """``/binding`` sets ``spec.nodeName``, which no update may change: kube's binding
    REST writes the pod without the update rules."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        return None

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_object_meta_update(new["metadata"], old["metadata"])


class EphemeralContainersStrategy(StatusStrategy):
    """``pods/ephemeralcontainers``: the pod as it was, with the new list."""

    body_is_kind = True

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        containers = (revert_to_old(new, old).get("spec") or {}).get("ephemeralContainers")
        spec = new.setdefault("spec", {})
        if containers:
            spec["ephemeralContainers"] = containers  # defaulted with the pod's decoding
        else:
            spec.pop("ephemeralContainers", None)
        drop_disabled("", "Pod", new, old, self.gates)
        if plain(containers or []) != plain(old.get("spec", {}).get("ephemeralContainers") or []):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta_update(new["metadata"], old["metadata"])
        errs += validate_pod_spec(new.get("spec") or {}, "spec", new["metadata"].get("name", ""))
        return errs + validate_ephemeral_update(
            new["spec"].get("ephemeralContainers") or [],
            old.get("spec", {}).get("ephemeralContainers") or [],
        )


@register("", "Service")
class ServiceStrategy(GenericStrategy):
    returns_deleted_object = True
    allow_create_on_update = True
    initial_status = {"loadBalancer": {}}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        if isinstance(obj.get("spec"), dict):
            normalize(obj["spec"], None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        spec, old_spec = new.get("spec"), old.get("spec")
        if isinstance(spec, dict) and isinstance(old_spec, dict):
            prepare_update(spec, old_spec)

    def name_rule(self) -> str:
        """KEP-5311: with RelaxedServiceNameValidation (on in kube v1.36) a new Service's
        name is a DNS-1123 label, which may begin with a digit; else DNS-1035."""
        return "label" if self.gates(RELAXED_SERVICE_NAMES) else "dns1035"

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_service(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errs = super().validate_update(new, old) + validate_cluster_ips_update(spec, old_spec)
        errs += load_balancer_class_update_errors(spec, old_spec)
        errs += health_check_update_errors(spec, old_spec)
        return errs + validate_service(spec)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        status, old_status = new.get("status") or {}, old.get("status") or {}
        return errs + validate_service_status(status, old_status, new.get("spec") or {})


@register("", "ServiceAccount")
class ServiceAccountStrategy(GenericStrategy):
    update_meta_checks = "UC"
    returns_deleted_object = True


@register("", "PersistentVolume")
class PersistentVolumeStrategy(GenericStrategy):
    """kube's PV strategy: a new volume is Pending since now; pvvalidation's rules."""

    returns_deleted_object = True  # as kube's store for the kind answers a delete

    initial_status = {"phase": "Pending"}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"]["lastPhaseTransitionTime"] = obj["metadata"]["creationTimestamp"]

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_pv(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's strategy validates the volume (metadata, spec, mount options), then
        ValidatePersistentVolumeUpdate validates it again before its own rules: each
        problem of the new volume is two causes."""
        again = self.validate_meta_update(new, old, "C") + validate_pv(new, old, mounts=False)
        first = self.validate_meta_update(new, old, "C") + validate_pv(new, old)
        return first + again + validate_pv_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's ValidatePersistentVolumeStatusUpdate checks the metadata only."""
        return validate_core_meta_update(new["metadata"], old["metadata"])

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return pv_warnings(obj)

    def subresource_strategies(self) -> dict[str, Strategy]:
        return {"status": PersistentVolumeStatusStrategy(self)}


class PersistentVolumeStatusStrategy(StatusStrategy):
    """``/status``: the phase's transition time follows the phase."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        status = new.get("status")
        if isinstance(status, dict):
            now = format_time(datetime.now(UTC))
            stamp_phase_transition(status, old.get("status") or {}, now)


@register("", "PersistentVolumeClaim")
class PersistentVolumeClaimStrategy(GenericStrategy):
    """kube's PVC strategy: data sources completed, claimspec's and claimupdate's rules."""

    returns_deleted_object = True  # as kube's store for the kind answers a delete
    update_meta_checks = "UC"  # kube's update checks the whole claim again

    initial_status = {"phase": "Pending"}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        prepare_data_sources(obj.setdefault("spec", {}), None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        prepare_data_sources(new.setdefault("spec", {}), old.get("spec") or {})

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_claim_spec(obj.get("spec") or {}, "spec")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + validate_claim_update(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + validate_claim_status(new)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return claim_warnings(obj)


def _pod_template_rules(template: Obj) -> list[FieldError]:
    return validate_pod_template(template, "template")


@register("", "PodTemplate")
class PodTemplateStrategy(SpecChecked, GenericStrategy):
    returns_deleted_object = True  # as kube's store for the kind answers a delete
    tracks_generation = True  # kube counts changes of the template
    checked = "template"
    check = staticmethod(_pod_template_rules)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        if old is not None and not generation_changed(obj, old):
            return []
        return template_warnings(obj.get("template"), "template", self.gates)


@register("", "ReplicationController")
class ReplicationControllerStrategy(SpecChecked, GenericStrategy):
    default_propagation = "Orphan"  # kube's v1 default: a delete leaves the pods
    tracks_generation = True
    check = staticmethod(validate_rc_spec)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        return errs + workload_status_errors("ReplicationController", new.get("status"))

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """As kube's: on an update that changed the generation, of the template as it
        was (kube's rcStrategy passes the old template where the new one belongs)."""
        if old is None:
            template = (obj.get("spec") or {}).get("template")
            warned = template_warnings(template, "spec.template", self.gates)
            return name_warnings(obj, WORKLOAD_NAME) + warned
        if not generation_changed(obj, old):
            return []
        return template_warnings(
            (old.get("spec") or {}).get("template"), "spec.template", self.gates
        )


class CoreCreateOnUpdateStrategy(GenericStrategy):
    """Endpoints (registry/discovery.py) and v1 Events (registry/events.py) build on it."""

    allow_create_on_update = True
