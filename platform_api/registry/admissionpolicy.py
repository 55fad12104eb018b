"""admissionregistration.platform.io/v1 ValidatingAdmissionPolicies and their bindings.

Both kinds are cluster-scoped.  This module holds their v1 defaults (``failurePolicy``
Fail, and ``SetDefaults_MatchResources`` / ``_Rule`` on the match resources), and their
strategies as kube's registry has them: a policy starts with an empty ``status`` that only
``/status`` writes change (kube's type-checking controller is its writer), generations
count spec changes, updates need a resourceVersion, and names ending in the static
suffix draw kube's warning.  The rules themselves are in ``admissionpolicy_validation``.
"""

from __future__ import annotations

from typing import Any

from platform_api.jsonpath import JSONPathError, parse
from platform_api.registry.admissionpolicy_validation import (
    PolicyOptions,
    policy_update_options,
    validate_binding_spec,
    validate_policy_spec,
)
from platform_api.registry.admissionregistration import GROUP, static_suffix_warnings
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.conditions import validate_conditions
from platform_api.validation.field import FieldError
from platform_api.validation.names import GENERIC_NAMES
from platform_api.validation.objectmeta import validate_object_meta, validate_object_meta_update

POLICY = "ValidatingAdmissionPolicy"
BINDING = "ValidatingAdmissionPolicyBinding"


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def match_resources_defaults(resources: Any) -> None:
    """``SetDefaults_MatchResources`` and ``SetDefaults_Rule`` of every (excluded) rule."""
    if not isinstance(resources, dict):
        return
    resources.setdefault("matchPolicy", "Equivalent")
    resources.setdefault("namespaceSelector", {})
    resources.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in resources.get(key) or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


@defaults(GROUP, POLICY)
def _policy_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("failurePolicy", "Fail")
        match_resources_defaults(spec.get("matchConstraints"))


@defaults(GROUP, BINDING)
def _binding_defaults(obj: Obj) -> None:
    match_resources_defaults(_spec(obj).get("matchResources"))


class _AdmissionPolicyStrategy(GenericStrategy):
    core_metadata_checks = False  # apimachinery's ValidateObjectMeta(Update)
    tracks_generation = True
    allow_unconditional_update = False

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return static_suffix_warnings(obj)

    def meta_update_errors(self, new: Obj, old: Obj) -> list[FieldError]:
        """kube's generic update checks ObjectMeta (names as path segments) and its update
        rules before the strategy validates the whole object again."""
        meta, old_meta = new["metadata"], old["metadata"]
        errs = validate_object_meta(meta, False, GENERIC_NAMES)
        return errs + validate_object_meta_update(meta, old_meta)


@register(GROUP, POLICY)
class ValidatingAdmissionPolicyStrategy(_AdmissionPolicyStrategy):
    """A new policy's status is ``{}``; ``/status`` writes keep spec and metadata (kube's
    ``ResetObjectMetaForStatus``) and check the status as kube does."""

    initial_status: Obj | None = {}
    status_writes_metadata = False

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._validate(obj, PolicyOptions())

    def _validate(self, obj: Obj, opts: PolicyOptions) -> list[FieldError]:
        name = obj["metadata"].get("name") or ""
        return super().validate(obj) + validate_policy_spec(_spec(obj), name, opts)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        opts = policy_update_options(_spec(new), _spec(old))
        return self.meta_update_errors(new, old) + self._validate(new, opts)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta_update(new["metadata"], old["metadata"])
        return errs + validate_policy_status(new.get("status"))


@register(GROUP, BINDING)
class ValidatingAdmissionPolicyBindingStrategy(_AdmissionPolicyStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_binding_spec(_spec(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.meta_update_errors(new, old) + self.validate(new)


def validate_policy_status(status: Any) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyStatus``: expression warnings and conditions."""
    status = status if isinstance(status, dict) else {}
    errs: list[FieldError] = []
    checking = status.get("typeChecking")
    warnings = checking.get("expressionWarnings") if isinstance(checking, dict) else None
    for i, warning in enumerate(warnings if isinstance(warnings, list) else []):
        path = f"status.typeChecking.expressionWarnings[{i}]"
        warning = warning if isinstance(warning, dict) else {}  # noqa: PLW2901
        if not warning.get("warning"):
            errs.append(field.required(f"{path}.warning"))
        errs += _field_ref(str(warning.get("fieldRef") or ""), f"{path}.fieldRef")
    return errs + validate_conditions(status.get("conditions"), "status.conditions")


def _field_ref(ref: str, path: str) -> list[FieldError]:
    ref = ref.strip()
    if not ref:
        return [field.required(path)]
    try:
        parse("{" + ref + "}")
    except JSONPathError as e:
        return [field.invalid(path, ref, f"invalid JSONPath: {e}")]
    return []
