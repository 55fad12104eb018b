"""The Namespace strategy (kube's pkg/registry/core/namespace) and ValidateNamespace*.

A namespace's ``spec.finalizers`` (the ``kubernetes`` one is added on create) change only
through ``/finalize``; its phase only through ``/status``, and only as its deletion
says: Active until it has a ``deletionTimestamp``, Terminating after.  Each finalizer is
a qualified name, and either a standard one or one with a domain.
"""

from __future__ import annotations

from platform_api.registry.strategy import (
    GenericStrategy,
    Obj,
    StatusStrategy,
    Strategy,
    register,
)
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_qualified_name
from platform_api.validation.objectmeta import STANDARD_FINALIZERS

NAMESPACE_NAME_LABEL = "platform.io/metadata.name"
UPSTREAM_NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
KUBERNETES_FINALIZER = "kubernetes"
ACTIVE, TERMINATING = "Active", "Terminating"
_FINALIZERS = "spec.finalizers"


def validate_spec_finalizers(finalizers: list[str], indexed: bool) -> list[FieldError]:
    """kube's validateFinalizerName for each: a qualified name, then a standard one or
    one with a domain.  ``/finalize`` names the index; create and update do not."""
    errs: list[FieldError] = []
    for i, name in enumerate(finalizers):
        at = f"{_FINALIZERS}[{i}]" if indexed else _FINALIZERS
        errs += [field.invalid(at, name, m) for m in is_qualified_name(name)]
        if "/" not in name and name not in STANDARD_FINALIZERS:
            detail = "name is neither a standard finalizer name nor is it fully qualified"
            errs.append(field.invalid(at, name, detail))
    return errs


def validate_phase(namespace: Obj) -> list[FieldError]:
    """ValidateNamespaceStatusUpdate's rule (kube's path spells ``Phase``)."""
    phase = (namespace.get("status") or {}).get("phase") or ""
    if not namespace["metadata"].get("deletionTimestamp"):
        if phase != ACTIVE:
            detail = "may only be 'Active' if `deletionTimestamp` is empty"
            return [field.invalid("status.Phase", phase, detail)]
    elif phase != TERMINATING:
        detail = "may only be 'Terminating' if `deletionTimestamp` is not empty"
        return [field.invalid("status.Phase", phase, detail)]
    return []


@register("", "Namespace")
class NamespaceStrategy(GenericStrategy):
    update_meta_checks = "UC"
    returns_deleted_object = True
    initial_status = {"phase": ACTIVE}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        spec = obj.setdefault("spec", {})
        finalizers = spec.setdefault("finalizers", [])
        if KUBERNETES_FINALIZER not in finalizers:
            finalizers.append(KUBERNETES_FINALIZER)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        # Finalizers change only through /finalize.
        if "spec" in old:
            new["spec"] = old["spec"]
        else:
            new.pop("spec", None)
        self.label(new)

    def label(self, obj: Obj) -> None:
        """Every namespace carries its name as a label, so selectors can match it (also
        under the upstream key when the server serves upstream names)."""
        labels = obj["metadata"].setdefault("labels", {})
        labels[NAMESPACE_NAME_LABEL] = obj["metadata"].get("name", "")
        if self.aliases is not None and self.aliases.enabled:
            labels[UPSTREAM_NAMESPACE_NAME_LABEL] = obj["metadata"].get("name", "")

    def default_labels(self, obj: Obj) -> None:
        """kube's defaulting labels a named namespace already, so a writer's
        managedFields own the label; one still to be named from ``generateName`` is
        labelled once named (``canonicalize``), unowned."""
        if obj.get("metadata", {}).get("name"):
            self.label(obj)

    def canonicalize(self, obj: Obj) -> None:
        super().canonicalize(obj)
        self.label(obj)

    def validate(self, obj: Obj) -> list[FieldError]:
        finalizers = (obj.get("spec") or {}).get("finalizers") or []
        return super().validate(obj) + validate_spec_finalizers(finalizers, indexed=False)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        finalizers = (new.get("spec") or {}).get("finalizers") or []
        errs = super().validate_update(new, old)
        return errs + validate_spec_finalizers(finalizers, indexed=False)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate_meta_update(new, old) + validate_phase(new)

    def subresource_strategies(self) -> dict[str, Strategy]:
        return {
            "status": NamespaceStatusStrategy(self),
            "finalize": NamespaceFinalizeStrategy(self),
        }


class NamespaceStatusStrategy(StatusStrategy):
    """``/status``: the spec stays; a status without a phase is Active (kube's default)."""

    main: NamespaceStrategy

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        status = new.setdefault("status", {})
        if not status.get("phase"):
            status["phase"] = ACTIVE
        self.main.label(new)


class NamespaceFinalizeStrategy(StatusStrategy):
    """``/finalize``: what the request says but for the status, which stays (kube's
    namespaceFinalizeStrategy); ValidateNamespaceFinalizeUpdate's rules."""

    main: NamespaceStrategy

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
        spec = new.setdefault("spec", {})
        if not spec.get("finalizers"):
            spec.pop("finalizers", None)
        self.main.label(new)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        finalizers = (new.get("spec") or {}).get("finalizers") or []
        errs = GenericStrategy.validate_update(self.main, new, old)
        return errs + validate_spec_finalizers(finalizers, indexed=True)
