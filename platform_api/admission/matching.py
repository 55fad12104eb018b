"""Which webhooks and policies a request calls: kube's ``ShouldCallHook`` and matcher.

In kube's order: the namespace selector, the object selector (old or new object), the
rules (operation, group, version, resource with ``*``, ``*/*`` and ``res/sub`` forms,
scope), then the match conditions in CEL.  A condition that errors (and none false)
fails closed with 403, as kube's matcher does; a selector that does not parse is 500.
The webhook configurations themselves are never sent to webhooks.  Under
``matchPolicy: Equivalent`` rules that miss the version asked for are tried against the
resource's other versions (``equivalence.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from platform_api import errors
from platform_api.admission.equivalence import Equivalence, Target, requested
from platform_api.admission.request import AdmissionRequest, request_body
from platform_api.cel import CELError
from platform_api.cel.admission import compile_match_condition
from platform_api.cel.environment import Program
from platform_api.cel.library import authz
from platform_api.selectors import LabelSelector, SelectorError, label_selector_from

Obj = dict[str, Any]
# Labels of a namespace by name (None: no such namespace).
NamespaceLabels = Callable[[str], dict[str, str] | None]
# Decides one authz-library check (async: the server's authorizers are).
Authorize = Callable[[authz.CheckAttributes], Awaitable[tuple[str, str]]]

EXEMPT_KINDS = frozenset(
    (
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    )
)
_MAX_AUTHZ_ROUNDS = 8


@dataclass(frozen=True)
class Rule:
    """One ``RuleWithOperations`` (``NamedRuleWithOperations`` with ``names``)."""

    operations: tuple[str, ...]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str
    names: tuple[str, ...] = ()  # resourceNames: any when empty


@dataclass(frozen=True)
class Condition:
    name: str
    expression: str
    program: Program | None
    error: str = ""  # the compile error, reported when the condition is evaluated


def compile_rule(raw: Obj) -> Rule:
    return Rule(
        tuple(raw.get("operations") or ()),
        tuple(raw.get("apiGroups") or ()),
        tuple(raw.get("apiVersions") or ()),
        tuple(raw.get("resources") or ()),
        raw.get("scope") or "*",
        tuple(raw.get("resourceNames") or ()),
    )


def compile_selector(raw: Obj | None) -> tuple[LabelSelector, str]:
    try:
        return label_selector_from(raw or {}), ""
    except SelectorError as e:
        return LabelSelector([]), str(e)


def compile_condition(raw: Obj) -> Condition:
    name, expression = str(raw.get("name", "")), str(raw.get("expression", ""))
    try:
        return Condition(name, expression, compile_match_condition(expression))
    except CELError as e:
        return Condition(name, expression, None, str(e))


class Matchable(Protocol):
    """What is matched against a request: a webhook, a policy's constraints or a binding's
    resources."""

    @property
    def rules(self) -> tuple[Rule, ...]: ...
    @property
    def namespace_selector(self) -> LabelSelector: ...
    @property
    def object_selector(self) -> LabelSelector: ...
    @property
    def selector_error(self) -> str: ...
    @property
    def match_policy(self) -> str: ...


class Conditional(Protocol):
    @property
    def conditions(self) -> tuple[Condition, ...]: ...
    @property
    def ignores_failures(self) -> bool: ...


def exempt(req: AdmissionRequest) -> bool:
    """kube's ``IsExemptAdmissionConfigurationResource``."""
    group, _, kind = req.kind
    return group.startswith("admissionregistration.") and kind in EXEMPT_KINDS


def _any(items: tuple[str, ...], wanted: str) -> bool:
    return "*" in items or wanted in items


def _scope(rule: Rule, req: AdmissionRequest, at: Target) -> bool:
    if rule.scope in ("", "*"):
        return True
    is_namespace = at.group == "" and at.resource == "namespaces" and at.version == "v1"
    cluster = is_namespace or not req.namespace
    return cluster if rule.scope == "Cluster" else rule.scope == "Namespaced" and not cluster


def _resource(rule: Rule, req: AdmissionRequest, at: Target) -> bool:
    for item in rule.resources:
        res, _, sub = item.partition("/")
        if res in ("*", at.resource) and sub in ("*", req.subresource):
            return True
    return False


def rule_matches(rule: Rule, req: AdmissionRequest, at: Target | None = None) -> bool:
    """kube's rule matcher, on the request as asked or at an equivalent version ``at``."""
    if rule.names and req.name not in rule.names:
        return False
    at = at or requested(req)
    return (
        _scope(rule, req, at)
        and _any(rule.operations, req.operation)
        and _any(rule.groups, at.group)
        and _any(rule.versions, at.version)
        and _resource(rule, req, at)
    )


def rules_match(
    rules: tuple[Rule, ...],
    req: AdmissionRequest,
    match_policy: str,
    equivalence: Equivalence | None,
) -> Target | None:
    """The version a rule matches: the one asked for, else (``matchPolicy: Equivalent``)
    the first equivalent an earlier rule names; None when none does."""
    if any(rule_matches(rule, req) for rule in rules):
        return requested(req)
    if match_policy != "Equivalent" or equivalence is None:
        return None
    equivalents = equivalence.equivalents(req)
    for rule in rules:
        for target in equivalents:
            if rule_matches(rule, req, target):
                return target
    return None


def _namespace_matches(hook: Matchable, req: AdmissionRequest, labels_of: NamespaceLabels) -> bool:
    if not req.namespace and req.resource != "namespaces":
        return True
    if hook.namespace_selector.empty():
        return True
    is_namespace_write = (
        req.resource == "namespaces"
        and not req.subresource
        and req.operation in ("CREATE", "UPDATE")
    )
    if is_namespace_write:
        labels = (req.object or {}).get("metadata", {}).get("labels") or {}
    else:
        name = req.namespace or req.name
        found = labels_of(name)
        if found is None:
            raise errors.not_found("namespaces", "", name)
        labels = found
    return hook.namespace_selector.matches(labels)


def _object_matches(hook: Matchable, req: AdmissionRequest) -> bool:
    if hook.object_selector.empty():
        return True
    for obj in (req.object, req.old_object):
        if obj is not None and hook.object_selector.matches(
            obj.get("metadata", {}).get("labels") or {}
        ):
            return True
    return False


def selected(
    hook: Matchable,
    req: AdmissionRequest,
    labels_of: NamespaceLabels,
    equivalence: Equivalence | None = None,
) -> Target | None:
    """Selectors and rules: the version at which the webhook sees this request, or None
    when it is not a candidate."""
    if hook.selector_error:
        raise errors.internal_error(hook.selector_error)
    if not _namespace_matches(hook, req, labels_of):
        return None
    if not _object_matches(hook, req):
        return None
    return rules_match(hook.rules, req, hook.match_policy, equivalence)


async def conditions_match(
    hook: Conditional, req: AdmissionRequest, authorize: Authorize | None
) -> bool:
    """kube's match-condition matcher: any false skips the webhook; otherwise errors skip
    it under failurePolicy Ignore and fail the request under Fail (403 naming the
    resource); all true calls it."""
    if not hook.conditions:
        return True
    variables = {
        "object": req.object,
        "oldObject": req.old_object,
        "request": request_body(req, ""),
        "namespaceObject": None,
    }
    matched, failures = await evaluate_conditions(hook.conditions, variables, req, authorize)
    if not matched or not failures:
        return matched
    if hook.ignores_failures:
        return False
    raise errors.forbidden(req.resource, req.group, req.name, aggregate(failures))


def aggregate(failures: list[str]) -> str:
    """Go's ``utilerrors.NewAggregate(...).Error()``."""
    return failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]"


async def evaluate_conditions(
    conditions: tuple[Condition, ...],
    variables: dict[str, Any],
    req: AdmissionRequest,
    authorize: Authorize | None,
    run: Callable[[Program], Awaitable[Any]] | None = None,
) -> tuple[bool, list[str]]:
    """(False, []) as soon as one condition is false; else (True, the errors).  ``run``
    evaluates a program (default: ``evaluate_program`` on ``variables``)."""
    failures: list[str] = []
    for condition in conditions:
        if condition.program is None:
            failures.append(f"compilation failed: {condition.error}")
            continue
        try:
            if run is not None:
                value = await run(condition.program)
            else:
                value = await evaluate_program(condition.program, variables, req, authorize)
        except CELError as e:
            failures.append(f"expression '{condition.expression}' resulted in error: {e}")
            continue
        if value is False:
            return False, []
    return True, failures


def _answer(
    decided: dict[str, tuple[str, str]],
    missing: list[authz.CheckAttributes],
    attrs: authz.CheckAttributes,
) -> tuple[str, str]:
    """A check decided in an earlier round, or no opinion for now (recorded)."""
    key = repr(attrs)  # its user is a dict: not hashable
    if key in decided:
        return decided[key]
    missing.append(attrs)
    return "no-opinion", ""


async def evaluate_program(
    program: Any, variables: dict[str, Any], req: AdmissionRequest, authorize: Authorize | None
) -> Any:
    """Evaluate with the authz library bound.  CEL calls are synchronous and the
    authorizers are not: each round answers the checks decided so far and records the
    rest; they are decided, and the expression runs again, until nothing is missing."""
    decided: dict[str, tuple[str, str]] = {}
    user = {
        "username": req.user.name,
        "uid": req.user.uid,
        "groups": list(req.user.groups),
        "extra": {k: list(v) for k, v in req.user.extra.items()},
    }
    for _ in range(_MAX_AUTHZ_ROUNDS):
        missing: list[authz.CheckAttributes] = []
        answer = functools.partial(_answer, decided, missing)
        with authz.bound(answer, user) as authorizer:
            check = authz.ResourceCheck(
                handle=authorizer.handle,
                user=authorizer.user,
                group=req.group,
                resource=req.resource,
                subresource=req.subresource,
                namespace=req.namespace,
                name=req.name,
            )
            value = program.run(
                {**variables, "authorizer": authorizer, "authorizer.requestResource": check}
            )
        if not missing or authorize is None:
            return value
        for attrs in missing:
            decided[repr(attrs)] = await authorize(attrs)
    return value
