"""Strategies: the per-kind rules the generic store applies (kube's ``rest.RESTCreateStrategy``).

A strategy is pure and synchronous.  ``GenericStrategy`` implements the rules every
kind shares (status sub-resource isolation, ``metadata.generation``, ObjectMeta
validation); kinds with their own rules subclass it in ``registry/core.py`` and
friends, and are looked up by ``strategy_for``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

from platform_api.fieldselectors import (
    CONVERTED_FIELD_LABELS,
    REFUSALS,
    FieldGetter,
    FieldLabels,
    MetaFieldLabels,
    field_getters,
)
from platform_api.registry.gateddrops import GateCheck, drop_disabled, kube_defaults
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.types import ResourceType
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import (
    validate_kube_finalizers,
    validate_object_meta,
    validate_object_meta_update,
)

Obj = dict[str, Any]
_FINALIZERS = "metadata.finalizers"


class Strategy(Protocol):
    resource: ResourceType
    allow_create_on_update: bool
    allow_unconditional_update: bool
    returns_deleted_object: bool
    # What a delete naming no propagation policy does (kube's
    # DefaultGarbageCollectionPolicy): "Background", or "Orphan" where v1 kept the
    # old default (Jobs, ReplicationControllers); a warning it answers then, if any.
    default_propagation: str
    default_propagation_warning: str | None
    # Finalizers a delete adds to an object not yet being deleted (a CRD's cleanup).
    finalizers_on_delete: tuple[str, ...]
    # Status writes also keep their metadata changes: kube's status strategies of the
    # built-in kinds reset only the spec (custom resources' keep nothing but status).
    status_writes_metadata: bool
    # Metadata a status write still takes from the stored object (a Deployment's labels).
    status_keeps_old_metadata: tuple[str, ...]
    # The (kind, group) an Invalid error names, when not the resource's own: kube names
    # the internal type it validated (an events.platform.io Event is a core Event).
    error_kind: tuple[str, str] | None

    def prepare_for_create(self, obj: Obj) -> None: ...

    def prepare_for_update(self, new: Obj, old: Obj) -> None: ...

    def validate(self, obj: Obj) -> list[FieldError]: ...

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]: ...

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]: ...

    def canonicalize(self, obj: Obj) -> None: ...

    def prepare_for_delete(self, obj: Obj) -> None:
        """Change an object whose deletion starts (before its finalizers run)."""
        ...

    def deletion_grace(self, obj: Obj, requested: int | None) -> int | None:
        """The grace period a delete gives ``obj`` (kube's CheckGracefulDelete), with
        ``requested`` the caller's ``gracePeriodSeconds``; None for kinds deleted at once."""
        ...

    def field_getters(self) -> dict[str, FieldGetter]:
        """The field labels field selectors may name (kube's ``GetAttrs``)."""
        ...


def spec_of(obj: Obj) -> Obj:
    """Everything but metadata and status: what a generation counts changes of."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class GenericStrategy:
    """Rules shared by every kind; the defaults of kube's generic registry."""

    allow_create_on_update = False
    allow_unconditional_update = True
    returns_deleted_object = False
    default_propagation = "Background"
    default_propagation_warning: str | None = None
    finalizers_on_delete: tuple[str, ...] = ()
    status_writes_metadata = True
    status_keeps_old_metadata: tuple[str, ...] = ()
    # Fields kube's strategies reset beyond every kind's (status on the main resource,
    # all but status on /status), by sub-resource ("" for the main one): no writer
    # there owns them (a CSR's spec).
    reset_fields: ClassVar[Mapping[str, tuple[str, ...]]] = MappingProxyType({})
    error_kind: tuple[str, str] | None = None
    # How the kind's kube ValidateUpdate checks the new metadata, in order, after the
    # generic update checks (``prepare.check_update``): "U" as an update's
    # (ValidateObjectMetaUpdate, most kinds), "C" as a create's (ValidateObjectMeta), or
    # both; each check makes a metadata problem one more cause.
    update_meta_checks = "U"
    # Whether the kind's metadata checks are core's wrappers (with its finalizer-name
    # rules) rather than apimachinery's own (admission registration, coordination).
    core_metadata_checks = True
    # Whether the kind's own validation checks its metadata on a create (kube's do but
    # a PodDisruptionBudget's, which BeforeCreate's generic check then covers).
    validates_metadata = True
    # Kinds whose metadata.generation tracks spec changes.
    tracks_generation = False
    # Status a new object starts with, when the kind has a status sub-resource.
    initial_status: Obj | None = None
    keep_status_on_create = False

    def __init__(self, resource: ResourceType) -> None:
        self.resource = resource
        # The server's upstream group names (--serve-upstream-groups), set by the server.
        self.aliases: Aliases | None = None
        # The server's feature gates (--feature-gates), set by the server.
        self.gates: GateCheck = kube_defaults

    def names_of(self, group: str) -> tuple[str, ...]:
        """The names a reference to ``group`` may use: the group, and its upstream name
        when the server serves upstream names."""
        upstream = self.aliases.upstream(group) if self.aliases is not None else ""
        return (group, upstream) if upstream else (group,)

    def prepare_for_create(self, obj: Obj) -> None:
        if self.resource.has_status() and not self.keep_status_on_create:
            if self.initial_status is None:
                obj.pop("status", None)
            else:
                obj["status"] = copy.deepcopy(self.initial_status)
        drop_disabled(self.resource.group, self.resource.kind, obj, None, self.gates)
        if self.tracks_generation:
            obj["metadata"]["generation"] = 1

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        if self.resource.has_status():
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        drop_disabled(self.resource.group, self.resource.kind, new, old, self.gates)
        if self.tracks_generation:
            generation = old["metadata"].get("generation", 1)
            changed = self.spec_changed(new, old)
            new["metadata"]["generation"] = generation + 1 if changed else generation

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Whether an update changes what ``metadata.generation`` counts (kube compares
        the Go values; kinds whose JSON can differ for one value compare as Go does)."""
        return spec_of(new) != spec_of(old)

    def name_rule(self) -> str:
        """How a new object's name is checked (``validation.names.NAME_RULES``)."""
        return self.resource.name_rule

    def validate(self, obj: Obj) -> list[FieldError]:
        meta = obj["metadata"]
        errs = validate_object_meta(meta, self.resource.namespaced, self.name_rule())
        return errs + self._core_finalizer_rules(meta)

    def _core_finalizer_rules(self, meta: Obj) -> list[FieldError]:
        """Core's finalizer-name rules, which its metadata wrappers add to each check;
        the kinds validated with apimachinery's own checks have none."""
        if not self.core_metadata_checks:
            return []
        return validate_kube_finalizers(meta.get("finalizers") or [], _FINALIZERS)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate_meta_update(new, old, self.update_meta_checks)

    def validate_meta_update(self, new: Obj, old: Obj, checks: str = "U") -> list[FieldError]:
        """The new metadata checked as ``checks`` says (``update_meta_checks``), each
        check with core's finalizer rules after it, as core's wrappers run them."""
        meta = new["metadata"]
        errs: list[FieldError] = []
        for check in checks:
            if check == "U":
                errs += validate_object_meta_update(meta, old["metadata"])
            else:
                errs += validate_object_meta(meta, self.resource.namespaced, self.name_rule())
            errs += self._core_finalizer_rules(meta)
        return errs

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return []

    def canonicalize(self, obj: Obj) -> None:
        return None

    def prepare_for_delete(self, obj: Obj) -> None:
        return None

    def deletion_grace(self, obj: Obj, requested: int | None) -> int | None:
        return None

    def field_getters(self) -> dict[str, FieldGetter]:
        rt = self.resource
        getters = field_getters(rt.group, rt.plural)
        if (rt.group, rt.plural) not in CONVERTED_FIELD_LABELS:
            return MetaFieldLabels(getters)  # kube's default conversion words the refusal
        refusal = REFUSALS.get((rt.group, rt.plural), "")
        group_version = f"{rt.group}/{rt.version}"
        return FieldLabels(getters, refusal.replace("{group_version}", group_version))


class SpecChecked(GenericStrategy):
    """A kind whose spec has rules of its own, checked on create and update alike; mix
    in before the base strategy (``class X(SpecChecked, WorkloadStrategy)``)."""

    check: Callable[[Obj], list[FieldError]]
    checked = "spec"  # the field ``check`` takes (a PodTemplate's ``template``)

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + type(self).check(obj.get(self.checked) or {})

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = super().validate_update(new, old)
        return errs + type(self).check(new.get(self.checked) or {})


def revert_to_old(new: Obj, old: Obj) -> Obj:
    """Make ``new`` a copy of ``old`` but for the request's resourceVersion (its
    precondition) and managedFields (an apply to a subresource has recorded its
    ownership); return the request's object as it was, for the fields a subresource
    carries over."""
    request = dict(new)
    metadata = new["metadata"]
    new.clear()
    new.update(copy.deepcopy(old))
    new["metadata"]["resourceVersion"] = metadata.get("resourceVersion")
    if "managedFields" in metadata:
        new["metadata"]["managedFields"] = metadata["managedFields"]
    return request


class StatusStrategy:
    """Writes through ``/status``: only ``status`` changes, everything else is kept."""

    allow_create_on_update = False
    returns_deleted_object = False
    default_propagation = "Background"
    default_propagation_warning: str | None = None
    finalizers_on_delete: tuple[str, ...] = ()
    status_writes_metadata = False
    status_keeps_old_metadata: tuple[str, ...] = ()
    # The body is the kind itself (a Pod to /ephemeralcontainers or /resize), which
    # kube's decoder defaults before ownership is recorded; /status is always one.
    body_is_kind = False

    def __init__(self, main: Strategy) -> None:
        self.main = main
        self.resource = main.resource
        self.error_kind = main.error_kind
        # kube's status strategies embed the kind's: a custom resource's, a Node's, an
        # APIService's /status also refuses a write without a resourceVersion.
        self.allow_unconditional_update = main.allow_unconditional_update

    @property
    def gates(self) -> GateCheck:
        """The main resource's feature gates (kinds not built on GenericStrategy: kube's)."""
        gates: GateCheck = getattr(self.main, "gates", kube_defaults)
        return gates

    def prepare_for_create(self, obj: Obj) -> None:  # pragma: no cover - never creates
        raise AssertionError("status sub-resources do not create")

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        self._reset_all_but_status(new, old)
        drop_disabled(self.resource.group, self.resource.kind, new, old, self.gates)
        status_rules = getattr(self.main, "prepare_status_update", None)
        if status_rules is not None:  # kinds that backfill what old clients leave out
            status_rules(new, old)

    def _reset_all_but_status(self, new: Obj, old: Obj) -> None:
        if self.main.status_writes_metadata:
            # kube's built-in status strategies reset the spec only, so label, annotation
            # and finalizer changes made through /status stick.
            for key in [k for k in new if k not in ("metadata", "status")]:
                del new[key]
            new.update({k: copy.deepcopy(v) for k, v in old.items() if k not in new})
            meta, old_meta = new["metadata"], old["metadata"]
            for key in ("generation", *self.main.status_keeps_old_metadata):
                if key in old_meta:
                    meta[key] = copy.deepcopy(old_meta[key])
                else:
                    meta.pop(key, None)
            return
        status = revert_to_old(new, old).get("status")
        if status is None:
            new.pop("status", None)
        else:
            new["status"] = status

    def validate(self, obj: Obj) -> list[FieldError]:
        return self.main.validate(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        status_rules = getattr(self.main, "validate_status_update", None)
        if status_rules is not None:  # kinds with rules of their own for status writes
            errs: list[FieldError] = status_rules(new, old)
            return errs
        return validate_object_meta_update(new["metadata"], old["metadata"])

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return []

    def canonicalize(self, obj: Obj) -> None:
        self.main.canonicalize(obj)

    def prepare_for_delete(self, obj: Obj) -> None:  # pragma: no cover - never deletes
        raise AssertionError("status sub-resources do not delete")

    def deletion_grace(self, obj: Obj, requested: int | None) -> int | None:  # pragma: no cover
        raise AssertionError("status sub-resources do not delete")

    def field_getters(self) -> dict[str, FieldGetter]:
        return self.main.field_getters()


class FinalizeStrategy(StatusStrategy):
    """Writes through a namespace's ``/finalize``: only ``spec.finalizers`` changes."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        finalizers = (new.get("spec") or {}).get("finalizers")
        metadata = new["metadata"]
        new.clear()
        new.update(copy.deepcopy(old))
        new["metadata"]["resourceVersion"] = metadata.get("resourceVersion")
        spec = new.setdefault("spec", {})
        if finalizers:
            spec["finalizers"] = finalizers
        else:
            spec.pop("finalizers", None)


# What kube's metav1.ResetObjectMetaForStatus takes back from the stored object on a
# status write (the status strategies that call it keep these).
RESET_FOR_STATUS = ("labels", "annotations", "finalizers", "ownerReferences")

StrategyFactory = Callable[[ResourceType], Strategy]
_STRATEGIES: dict[tuple[str, str], StrategyFactory] = {}


def register(group: str, kind: str) -> Callable[[StrategyFactory], StrategyFactory]:
    """Class decorator: the strategy of ``group``/``kind`` (any version)."""

    def decorate(factory: StrategyFactory) -> StrategyFactory:
        _STRATEGIES[(group, kind)] = factory
        return factory

    return decorate


def strategy_for(resource: ResourceType) -> Strategy:
    """The registered strategy of a kind (``platform_api.registry`` imports them all)."""
    factory = _STRATEGIES.get((resource.group, resource.kind), GenericStrategy)
    return factory(resource)
