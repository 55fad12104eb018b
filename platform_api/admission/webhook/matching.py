"""Which webhooks a request calls: kube's ``ShouldCallHook``.

In kube's order: the namespace selector, the object selector (old or new object), the
rules (operation, group, version, resource with ``*``, ``*/*`` and ``res/sub`` forms,
scope), then the match conditions in CEL.  A condition that errors (and none false)
fails closed with 403, as kube's matcher does; a selector that does not parse is 500.
The webhook configurations themselves are never sent to webhooks.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from platform_api import errors
from platform_api.admission.webhook.hooks import Hook, Rule
from platform_api.admission.webhook.review import WebhookRequest, request_body
from platform_api.cel import CELError
from platform_api.cel.library import authz

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


def exempt(req: WebhookRequest) -> bool:
    """kube's ``IsExemptAdmissionConfigurationResource``."""
    group, _, kind = req.kind
    return group.startswith("admissionregistration.") and kind in EXEMPT_KINDS


def _any(items: tuple[str, ...], wanted: str) -> bool:
    return "*" in items or wanted in items


def _scope(rule: Rule, req: WebhookRequest) -> bool:
    if rule.scope in ("", "*"):
        return True
    is_namespace = req.group == "" and req.resource == "namespaces" and req.version == "v1"
    cluster = is_namespace or not req.namespace
    return cluster if rule.scope == "Cluster" else rule.scope == "Namespaced" and not cluster


def _resource(rule: Rule, req: WebhookRequest) -> bool:
    for item in rule.resources:
        res, _, sub = item.partition("/")
        if res in ("*", req.resource) and sub in ("*", req.subresource):
            return True
    return False


def rule_matches(rule: Rule, req: WebhookRequest) -> bool:
    return (
        _scope(rule, req)
        and _any(rule.operations, req.operation)
        and _any(rule.groups, req.group)
        and _any(rule.versions, req.version)
        and _resource(rule, req)
    )


def _namespace_matches(hook: Hook, req: WebhookRequest, labels_of: NamespaceLabels) -> bool:
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


def _object_matches(hook: Hook, req: WebhookRequest) -> bool:
    if hook.object_selector.empty():
        return True
    for obj in (req.object, req.old_object):
        if obj is not None and hook.object_selector.matches(
            obj.get("metadata", {}).get("labels") or {}
        ):
            return True
    return False


def selected(hook: Hook, req: WebhookRequest, labels_of: NamespaceLabels) -> bool:
    """Selectors and rules: whether the webhook is a candidate for this request."""
    if hook.selector_error:
        raise errors.internal_error(hook.selector_error)
    if not _namespace_matches(hook, req, labels_of):
        return False
    if not _object_matches(hook, req):
        return False
    return any(rule_matches(rule, req) for rule in hook.rules)


async def conditions_match(hook: Hook, req: WebhookRequest, authorize: Authorize | None) -> bool:
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
    failures: list[str] = []
    for condition in hook.conditions:
        if condition.program is None:
            failures.append(f"compilation failed: {condition.error}")
            continue
        try:
            value = await _evaluate(condition.program, variables, req, authorize)
        except CELError as e:
            failures.append(f"expression '{condition.expression}' resulted in error: {e}")
            continue
        if value is False:
            return False
    if not failures:
        return True
    if hook.ignores_failures:
        return False
    why = failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]"
    raise errors.forbidden(req.resource, req.group, req.name, why)


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


async def _evaluate(
    program: Any, variables: dict[str, Any], req: WebhookRequest, authorize: Authorize | None
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
