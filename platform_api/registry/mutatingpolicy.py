"""admissionregistration.platform.io/v1 MutatingAdmissionPolicies and their bindings.

Both kinds are cluster-scoped and, unlike validating policies, have no status (kube has
no type-checking controller for them).  Their v1 defaults, like their strategies, are the
validating kinds' (``admissionpolicy``): ``failurePolicy`` Fail and the match resources'
(``SetDefaults_MatchResources`` / ``_Rule``), none for ``reinvocationPolicy``; generation
counts spec changes, updates need a resourceVersion, names ending in the static suffix
draw kube's warning.

Validation is kube's ``ValidateMutatingAdmissionPolicy`` and ``...Binding``
(``pkg/apis/admissionregistration/validation``).  The spec's start, match conditions,
variables, param kinds and references are the validating policies' own checks
(``admissionpolicy_validation``); what is particular to mutation is here: only CREATE,
UPDATE and CONNECT can be matched (a DELETE has no object to mutate), every mutation
names its patch type and carries exactly that member, and the reinvocation policy is
required.  kube always compiles a mutating policy with its composition compiler, so
``variables`` is declared even when the policy has none.
"""

from __future__ import annotations

from platform_api.cel.admission import PolicyCompiler
from platform_api.cel.mutation import APPLY_CONFIGURATION, JSON_PATCH, compile_mutation
from platform_api.registry.admissionpolicy import (
    _AdmissionPolicyStrategy,
    _binding_defaults,
    _policy_defaults,
    _spec,
)
from platform_api.registry.admissionpolicy_validation import (
    PolicyOptions,
    binding_spec_rules,
    dicts,
    policy_conditions_and_variables,
    policy_spec_rules,
    policy_update_options,
)
from platform_api.registry.admissionregistration import GROUP
from platform_api.registry.admissionregistration_validation import (
    REINVOCATION_POLICIES,
    cel_errors,
)
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError

POLICY = "MutatingAdmissionPolicy"
BINDING = "MutatingAdmissionPolicyBinding"
# kube's supportedMutatingOperations, sorted as its error lists them
MUTATING_OPERATIONS = ["*", "CONNECT", "CREATE", "UPDATE"]
PATCH_TYPES = [APPLY_CONFIGURATION, JSON_PATCH]
# the mutation member each patch type requires
_MEMBERS = {APPLY_CONFIGURATION: "applyConfiguration", JSON_PATCH: "jsonPatch"}


def validate_mutating_policy_spec(spec: Obj, opts: PolicyOptions) -> list[FieldError]:
    """``validateMutatingAdmissionPolicySpec``, in kube's order."""
    path = "spec"
    errs = policy_spec_rules(spec, path)
    constraints = spec.get("matchConstraints")
    if isinstance(constraints, dict):
        errs += _mutating_operations(constraints, f"{path}.matchConstraints")
    compiler = PolicyCompiler(isinstance(spec.get("paramKind"), dict), composition=True)
    errs += policy_conditions_and_variables(spec, opts, compiler, path)
    mutations = dicts(spec.get("mutations"))
    if not mutations:
        detail = "mutations must contain at least one item"
        errs.append(field.required(f"{path}.mutations", detail))
    for i, mutation in enumerate(mutations):
        errs += _mutation(compiler, mutation, f"{path}.mutations[{i}]")
    reinvocation = spec.get("reinvocationPolicy")
    if not reinvocation:
        errs.append(field.required(f"{path}.reinvocationPolicy"))
    elif reinvocation not in REINVOCATION_POLICIES:
        at = f"{path}.reinvocationPolicy"
        errs.append(field.not_supported(at, reinvocation, REINVOCATION_POLICIES))
    return errs


def validate_mutating_binding_spec(spec: Obj) -> list[FieldError]:
    """``validateMutatingAdmissionPolicyBindingSpec``: a validating binding's rules without
    validation actions, and the mutating operations of its match resources."""
    errs = binding_spec_rules(spec)
    resources = spec.get("matchResources")
    if isinstance(resources, dict):
        errs += _mutating_operations(resources, "spec.matchResources")
    return errs


def _mutating_operations(resources: Obj, path: str) -> list[FieldError]:
    """Operations of the resource rules (not the excluded ones) that cannot be mutated;
    kube reports them all at one path, without the rule's index."""
    at = f"{path}.resourceRules.operations"
    return [
        field.not_supported(at, operation, MUTATING_OPERATIONS)
        for rule in dicts(resources.get("resourceRules"))
        for operation in rule.get("operations") or []
        if operation not in MUTATING_OPERATIONS
    ]


def _mutation(compiler: PolicyCompiler, mutation: Obj, path: str) -> list[FieldError]:
    """``validateMutation``: the patch type, its member required, the other one refused."""
    patch_type = mutation.get("patchType") or ""
    if not patch_type:
        return [field.required(f"{path}.patchType")]
    if patch_type not in PATCH_TYPES:
        return [field.not_supported(f"{path}.patchType", patch_type, PATCH_TYPES)]
    errs: list[FieldError] = []
    member = _MEMBERS[patch_type]
    body = mutation.get(member)
    if not isinstance(body, dict):
        detail = f"must be specified when patchType is {patch_type}"
        errs.append(field.required(f"{path}.{member}", detail))
    else:
        errs += _expression(compiler, body, patch_type, f"{path}.{member}.expression")
    for other in _MEMBERS.values():
        if other != member and mutation.get(other) is not None:
            detail = f"must not be specified when patchType is {patch_type}"
            errs.append(field.invalid(f"{path}.{other}", "{" + other + "}", detail))
    return errs


def _expression(
    compiler: PolicyCompiler, body: Obj, patch_type: str, path: str
) -> list[FieldError]:
    """The mutation's expression, trimmed (kube compiles and shows it trimmed)."""
    source = (body.get("expression") or "").strip()
    if not source:
        return [field.required(path)]
    return cel_errors(lambda s: compile_mutation(compiler, s, patch_type), source, path)


# kube's v1 defaults are the validating kinds' (SetDefaults_MutatingAdmissionPolicySpec
# sets failurePolicy only, as the validating one does)
defaults(GROUP, POLICY)(_policy_defaults)
defaults(GROUP, BINDING)(_binding_defaults)


@register(GROUP, POLICY)
class MutatingAdmissionPolicyStrategy(_AdmissionPolicyStrategy):
    """An update leaves unchanged match conditions unchecked, as kube's
    ``ignoreMutatingAdmissionPolicyMatchConditions`` does."""

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._validate(obj, PolicyOptions())

    def _validate(self, obj: Obj, opts: PolicyOptions) -> list[FieldError]:
        return super().validate(obj) + validate_mutating_policy_spec(_spec(obj), opts)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        opts = policy_update_options(_spec(new), _spec(old))
        return self.meta_update_errors(new, old) + self._validate(new, opts)


@register(GROUP, BINDING)
class MutatingAdmissionPolicyBindingStrategy(_AdmissionPolicyStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_mutating_binding_spec(_spec(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.meta_update_errors(new, old) + self.validate(new)
