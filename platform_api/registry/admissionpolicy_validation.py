"""Validation of ValidatingAdmissionPolicies and their bindings, with kube's paths and messages.

kube's ``ValidateValidatingAdmissionPolicy`` and ``ValidateValidatingAdmissionPolicyBinding``
(``pkg/apis/admissionregistration/validation``): match resources, param kinds and
references, validation actions, and every CEL expression compiled as kube's admission
compiler compiles it (``cel.admission.PolicyCompiler``: variables typed one after the
other, ``params`` only with a paramKind, no ``authorizer`` in message expressions).
Rules shared with the webhook configurations (rules, match conditions, selectors) are
reused from ``admissionregistration_validation``; the parts MutatingAdmissionPolicies
share (``policy_spec_rules``, ``policy_conditions_and_variables``, ``binding_spec_rules``)
are used by ``mutatingpolicy`` too.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.cel.admission import STRING, STRING_OR_NULL, PolicyCompiler
from platform_api.cel.schematypes import RESERVED_WORDS
from platform_api.registry.admissionregistration_validation import (
    FAILURE_POLICIES,
    MATCH_POLICIES,
    cel_errors,
    validate_match_conditions,
    validate_rule_with_operations,
)
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
)

Obj = dict[str, Any]

REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
PARAMETER_NOT_FOUND_ACTIONS = ["Deny", "Allow"]  # kube lists them in this order
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024
_CEL_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*\Z")
_NEWLINES = re.compile(r"[\n\r]+")


@dataclass(frozen=True)
class PolicyOptions:
    """An update skips the match conditions when neither they nor the paramKind changed."""

    ignore_match_conditions: bool = False


def policy_update_options(new: Obj, old: Obj) -> PolicyOptions:
    """kube's ``ignoreValidatingAdmissionPolicyMatchConditions``."""
    keys = ("paramKind", "matchConditions")
    return PolicyOptions(all(new.get(k) == old.get(k) for k in keys))


def dicts(value: Any) -> list[Obj]:
    """The objects of a list field (the decoder already refused any other item)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def policy_spec_rules(spec: Obj, path: str) -> list[FieldError]:
    """The start of a policy's spec, as validating and mutating policies share it:
    failurePolicy, paramKind, matchConstraints (with resourceRules required)."""
    errs: list[FieldError] = []
    policy = spec.get("failurePolicy")
    if policy is None:
        errs.append(field.required(f"{path}.failurePolicy"))
    elif policy not in FAILURE_POLICIES:
        errs.append(field.not_supported(f"{path}.failurePolicy", policy, FAILURE_POLICIES))
    if isinstance(spec.get("paramKind"), dict):
        errs += _param_kind(spec["paramKind"], f"{path}.paramKind")
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, dict):
        errs.append(field.required(f"{path}.matchConstraints"))
    else:
        errs += validate_match_resources(constraints, f"{path}.matchConstraints")
        if not constraints.get("resourceRules"):
            errs.append(field.required(f"{path}.matchConstraints.resourceRules"))
    return errs


def validate_policy_spec(spec: Obj, name: str, opts: PolicyOptions) -> list[FieldError]:
    """``validateValidatingAdmissionPolicySpec``, in kube's order."""
    path = "spec"
    params = isinstance(spec.get("paramKind"), dict)
    errs = policy_spec_rules(spec, path)
    compiler = PolicyCompiler(params, composition=bool(spec.get("variables")))
    errs += policy_conditions_and_variables(spec, opts, compiler, path)
    validations, annotations = dicts(spec.get("validations")), spec.get("auditAnnotations")
    if not validations and not annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        errs.append(field.required(f"{path}.validations", detail))
        errs.append(field.required(f"{path}.auditAnnotations", detail))
        return errs
    for i, validation in enumerate(validations):
        errs += _validation(compiler, validation, f"{path}.validations[{i}]")
    if isinstance(annotations, list):
        errs += _audit_annotations(compiler, name, dicts(annotations), f"{path}.auditAnnotations")
    return errs


def policy_conditions_and_variables(
    spec: Obj, opts: PolicyOptions, compiler: PolicyCompiler, path: str
) -> list[FieldError]:
    """Match conditions (unless an update left them alone), then the variables, each
    declared in ``compiler`` for what is compiled after it."""
    errs: list[FieldError] = []
    if not opts.ignore_match_conditions:
        conditions = dicts(spec.get("matchConditions"))
        errs += validate_match_conditions(conditions, f"{path}.matchConditions", compiler.params)
    for i, variable in enumerate(dicts(spec.get("variables"))):
        errs += _variable(compiler, variable, f"{path}.variables[{i}]")
    return errs


def _param_kind(kind: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version, at = kind.get("apiVersion") or "", f"{path}.apiVersion"
    if not api_version:
        errs.append(field.required(at))
    elif api_version.count("/") > 1:
        errs.append(
            field.invalid(at, api_version, f"unexpected GroupVersion string: {api_version}")
        )
    elif api_version != "/":
        group, _, version = api_version.rpartition("/")
        problems = is_dns1123_subdomain(group) if group else []
        if problems:
            errs.append(field.invalid(at, group, ",".join(problems)))
        if not version:
            errs.append(field.invalid(at, api_version, "version must be specified"))
        elif problems := is_dns1035_label(version):
            errs.append(field.invalid(at, version, ",".join(problems)))
    name = kind.get("kind") or ""
    if not name:
        errs.append(field.required(f"{path}.kind"))
    elif problems := is_dns1035_label(name.lower()):
        detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
        errs.append(field.invalid(f"{path}.kind", name, detail))
    return errs


def validate_match_resources(resources: Obj, path: str) -> list[FieldError]:
    """kube's ``validateMatchResources`` (selectors are checked strictly)."""
    errs: list[FieldError] = []
    policy = resources.get("matchPolicy")
    if policy is None:
        errs.append(field.required(f"{path}.matchPolicy"))
    elif policy not in MATCH_POLICIES:
        errs.append(field.not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if resources.get(key) is None:
            errs.append(field.required(f"{path}.{key}"))
        else:
            errs += validate_label_selector(resources[key], f"{path}.{key}")
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(dicts(resources.get(key))):
            errs += _named_rule(rule, f"{path}.{key}[{i}]")
    return errs


def _named_rule(rule: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(rule.get("resourceNames") or []):
        at = f"{path}.resourceNames[{i}]"
        errs += [field.invalid(at, name, m) for m in is_path_segment_name(name)]
        if name in seen:
            errs.append(field.duplicate(at, name))
        seen.add(name)
    return errs + validate_rule_with_operations(rule, path)


def _variable(compiler: PolicyCompiler, variable: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, source = variable.get("name") or "", variable.get("expression") or ""
    if not name.strip():
        errs.append(field.required(f"{path}.name", "name is not specified"))
    elif not _CEL_IDENT.match(name) or name in RESERVED_WORDS:
        errs.append(field.invalid(f"{path}.name", name, "must be a valid CEL identifier"))
    if not source.strip():
        errs.append(field.required(f"{path}.expression", "expression is not specified"))
    else:
        errs += cel_errors(functools.partial(compiler.variable, name), source, f"{path}.expression")
    return errs


def _validation(compiler: PolicyCompiler, validation: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    source = validation.get("expression") or ""
    if not source.strip():
        errs.append(field.required(f"{path}.expression", "expression is not specified"))
    else:
        errs += cel_errors(compiler.compile, source, f"{path}.expression")
    message_expression = validation.get("messageExpression") or ""
    at = f"{path}.messageExpression"
    if message_expression and not message_expression.strip():
        errs.append(field.invalid(at, message_expression, "must be non-empty if specified"))
    elif message_expression:
        compile_message = functools.partial(compiler.compile, returns=STRING, authorizer=False)
        errs += cel_errors(compile_message, message_expression, at)
    message = validation.get("message") or ""
    if message and not message.strip():
        errs.append(field.invalid(f"{path}.message", message, "must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errs.append(field.invalid(f"{path}.message", message, "must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(field.not_supported(f"{path}.reason", reason, REASONS))
    return errs


def _audit_annotations(
    compiler: PolicyCompiler, name: str, annotations: list[Obj], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        # kube shows the internal structs, whose fields have no JSON names
        shown = [
            gojson.Struct(Key=a.get("key") or "", ValueExpression=a.get("valueExpression") or "")
            for a in annotations
        ]
        detail = f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"
        errs.append(field.invalid(path, gojson.text(shown), detail))
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        errs += _audit_annotation(compiler, name, annotation, f"{path}[{i}]")
        key = annotation.get("key") or ""
        if key in keys:
            errs.append(field.duplicate(f"{path}[{i}].key", key))
        keys.add(key)
    return errs


def _audit_annotation(
    compiler: PolicyCompiler, name: str, annotation: Obj, path: str
) -> list[FieldError]:
    key = annotation.get("key") or ""
    if name:
        qualified = f"{name}/{key}"
        errs = [field.invalid(f"{path}.key", qualified, m) for m in is_qualified_name(qualified)]
    else:
        errs = [field.invalid(f"{path}.key", key, "requires metadata.name be non-empty")]
    value = annotation.get("valueExpression") or ""
    trimmed, at = value.strip(), f"{path}.valueExpression"
    if not trimmed:
        errs.append(field.required(at, "valueExpression is not specified"))
    elif len(trimmed.encode()) > MAX_AUDIT_VALUE_EXPRESSION:
        detail = f"must not exceed {MAX_AUDIT_VALUE_EXPRESSION} bytes in length"
        errs.append(field.required(at, detail))
    else:
        compile_value = functools.partial(compiler.compile, returns=STRING_OR_NULL)
        errs += cel_errors(compile_value, trimmed, at, shown=value)
    return errs


def validate_binding_spec(spec: Obj) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyBindingSpec``."""
    actions = spec.get("validationActions")
    errs = binding_spec_rules(spec)
    return errs + _validation_actions(actions if isinstance(actions, list) else [])


def binding_spec_rules(spec: Obj) -> list[FieldError]:
    """What validating and mutating bindings share: policyName, paramRef, matchResources."""
    errs: list[FieldError] = []
    policy = spec.get("policyName") or ""
    if not policy:
        errs.append(field.required("spec.policyName"))
    else:
        errs += [field.invalid("spec.policyName", policy, m) for m in is_dns1123_subdomain(policy)]
    if isinstance(spec.get("paramRef"), dict):
        errs += _param_ref(spec["paramRef"], "spec.paramRef")
    if isinstance(spec.get("matchResources"), dict):
        errs += validate_match_resources(spec["matchResources"], "spec.matchResources")
    return errs


def _param_ref(ref: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, selector = ref.get("name") or "", ref.get("selector")
    exclusive = "name and selector are mutually exclusive"
    if name:
        errs += [field.invalid(f"{path}.name", name, m) for m in is_path_segment_name(name)]
        if selector is not None:
            errs.append(field.forbidden(f"{path}.name", exclusive))
    if selector is not None:
        errs += validate_label_selector(selector, f"{path}.selector")
        if name:
            errs.append(field.forbidden(f"{path}.selector", exclusive))
    if not name and selector is None:
        errs.append(field.required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(field.required(f"{path}.parameterNotFoundAction"))
    elif action not in PARAMETER_NOT_FOUND_ACTIONS:
        at = f"{path}.parameterNotFoundAction"
        errs.append(field.not_supported(at, action, PARAMETER_NOT_FOUND_ACTIONS))
    return errs


def _validation_actions(actions: list[Any]) -> list[FieldError]:
    path = "spec.validationActions"
    errs: list[FieldError] = []
    seen: set[Any] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(field.not_supported(f"{path}[{i}]", action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(field.duplicate(f"{path}[{i}]", action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        detail = (
            "must not contain both Deny and Warn (repeating the same validation failure "
            "information in the API response and headers serves no purpose)"
        )
        errs.append(field.invalid(path, gojson.text(actions), detail))
    if not seen:
        errs.append(field.required(path, "at least one validation action is required"))
    return errs
