"""ValidatingAdmissionPolicies and their bindings, compiled once per stored revision.

A policy's expressions (match conditions, variables, validations, message expressions,
audit annotations) compile in kube's policy environment; one that does not compile is
kept as the policy's configuration error, which kube reports on every request the policy
matches (``failurePolicy`` decides whether that denies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from platform_api.admission.matching import Condition, Rule, compile_rule, compile_selector
from platform_api.cel import CELError
from platform_api.cel.admission import BOOL, STRING, STRING_OR_NULL, PolicyCompiler
from platform_api.cel.environment import Program
from platform_api.selectors import LabelSelector

Obj = dict[str, Any]
P = TypeVar("P", bound="Policy")


@dataclass(frozen=True)
class Resources:
    """``MatchResources``: what a policy (or a binding, narrowing it) applies to."""

    rules: tuple[Rule, ...]
    exclude: tuple[Rule, ...]
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    selector_error: str = ""
    match_policy: str = "Equivalent"


@dataclass(frozen=True)
class Validation:
    expression: str
    program: Program
    message: str
    message_program: Program | None
    reason: str


@dataclass(frozen=True)
class AuditAnnotation:
    key: str
    expression: str
    program: Program


@dataclass
class Policy:
    name: str
    failure_policy: str
    param_kind: tuple[str, str] | None  # apiVersion, kind
    constraints: Resources
    conditions: tuple[Condition, ...]
    variables: tuple[tuple[str, Program | str], ...]  # a program, or its compile error
    validations: tuple[Validation, ...]
    audit_annotations: tuple[AuditAnnotation, ...]
    error: str = ""  # a compile error: the policy's configuration error
    # Whether any expression names these: evaluation skips their cost when none does.
    uses_authorizer: bool = False
    uses_namespace: bool = False

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"


@dataclass
class Binding:
    name: str
    policy: str
    actions: tuple[str, ...]
    param_ref: Obj | None
    resources: Resources | None
    extra: dict[str, Any] = field(default_factory=dict)


def compile_resources(raw: Obj | None) -> Resources:
    raw = raw or {}
    namespaces, ns_error = compile_selector(raw.get("namespaceSelector"))
    objects, obj_error = compile_selector(raw.get("objectSelector"))
    return Resources(
        tuple(compile_rule(r) for r in raw.get("resourceRules") or ()),
        tuple(compile_rule(r) for r in raw.get("excludeResourceRules") or ()),
        namespaces,
        objects,
        ns_error or obj_error,
        raw.get("matchPolicy") or "Equivalent",
    )


def compile_common(obj: Obj, cls: type[P]) -> tuple[P, PolicyCompiler]:
    """What validating and mutating policies share: name, failure policy, parameters,
    constraints, variables and match conditions; and the compiler, with the variables
    declared, for the kind's own expressions.  A compile error is the policy's error."""
    spec = obj.get("spec") or {}
    kind = spec.get("paramKind") or None
    raw_variables = [v for v in spec.get("variables") or () if isinstance(v, dict)]
    compiler = PolicyCompiler(params=kind is not None, composition=bool(raw_variables))
    policy = cls(
        name=str(obj.get("metadata", {}).get("name", "")),
        failure_policy=spec.get("failurePolicy") or "Fail",
        param_kind=(str(kind.get("apiVersion", "")), str(kind.get("kind", ""))) if kind else None,
        constraints=compile_resources(spec.get("matchConstraints")),
        conditions=(),
        variables=tuple(_variable(compiler, v) for v in raw_variables),
        validations=(),
        audit_annotations=(),
    )
    try:
        policy.conditions = tuple(
            Condition(
                str(c.get("name", "")),
                str(c.get("expression", "")),
                compiler.compile(str(c.get("expression", "")), BOOL),
            )
            for c in spec.get("matchConditions") or ()
        )
    except CELError as e:
        policy.error = str(e)
    text = str(spec)
    policy.uses_authorizer = "authorizer" in text
    policy.uses_namespace = "namespaceObject" in text
    return policy, compiler


def compile_policy(obj: Obj) -> Policy:
    spec = obj.get("spec") or {}
    policy, compiler = compile_common(obj, Policy)
    if policy.error:
        return policy
    try:
        policy.validations = tuple(_validation(compiler, v) for v in spec.get("validations") or ())
        policy.audit_annotations = tuple(
            AuditAnnotation(
                str(a.get("key", "")),
                str(a.get("valueExpression", "")),
                compiler.compile(str(a.get("valueExpression", "")), STRING_OR_NULL),
            )
            for a in spec.get("auditAnnotations") or ()
        )
    except CELError as e:
        policy.error = str(e)
    return policy


def _variable(compiler: PolicyCompiler, raw: Obj) -> tuple[str, Program | str]:
    """A variable's program, or its compile error (evaluating it fails, as in kube)."""
    name = str(raw.get("name", ""))
    try:
        return name, compiler.variable(name, str(raw.get("expression", "")))
    except CELError as e:
        return name, str(e)


def _validation(compiler: PolicyCompiler, raw: Obj) -> Validation:
    expression = str(raw.get("expression", ""))
    message_expression = raw.get("messageExpression")
    return Validation(
        expression=expression,
        program=compiler.compile(expression, BOOL),
        message=str(raw.get("message") or ""),
        message_program=(
            compiler.compile(str(message_expression), STRING, authorizer=False)
            if message_expression
            else None
        ),
        reason=str(raw.get("reason") or ""),
    )


def compile_binding(obj: Obj) -> Binding:
    spec = obj.get("spec") or {}
    resources = spec.get("matchResources")
    return Binding(
        name=str(obj.get("metadata", {}).get("name", "")),
        policy=str(spec.get("policyName", "")),
        actions=tuple(spec.get("validationActions") or ()),
        param_ref=spec.get("paramRef") or None,
        resources=compile_resources(resources) if resources is not None else None,
    )
