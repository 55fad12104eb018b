"""Access reviews (``authorization.platform.io/v1``): ask the server's authorizer.

SelfSubjectAccessReview asks about the caller, SubjectAccessReview about any user or
group, LocalSubjectAccessReview about one namespace (the path's).  The answer is the
authorizer chain's: ``allowed``, ``denied`` for an explicit deny, and its reason.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision, RuleSet
from platform_api.codec.goshape import shape
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope
from platform_api.registry.prepare import check_namespace
from platform_api.validation import field
from platform_api.validation.accessreviews import (
    evaluation_error,
    validate_local,
    validate_metadata,
    validate_spec,
)

Obj = dict[str, Any]
GROUP = "authorization.platform.io"


def _refuse(errs: list[field.FieldError]) -> None:
    """kube names no kind here: its internal review's Kind is empty after decoding."""
    if errs:
        raise errors.invalid("", GROUP, "", errs)


def _attributes(user: UserInfo, spec: Obj) -> Attributes:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None:
        return Attributes(
            user=user,
            verb=resource.get("verb", ""),
            resource_request=True,
            namespace=resource.get("namespace", ""),
            api_group=resource.get("group", ""),
            api_version=resource.get("version", ""),
            resource=resource.get("resource", ""),
            subresource=resource.get("subresource", ""),
            name=resource.get("name", ""),
        )
    non_resource = non_resource or {}
    return Attributes(
        user=user,
        verb=non_resource.get("verb", ""),
        resource_request=False,
        path=non_resource.get("path", ""),
    )


async def _answer(scope: Scope, review: Obj, attrs: Attributes) -> bytes:
    authorizer = scope.handlers.authorizer
    decision, reason = (
        await authorizer.authorize(attrs) if authorizer else (Decision.NO_OPINION, "")
    )
    status: Obj = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    problem = evaluation_error(review["spec"].get("resourceAttributes"))
    if problem:
        status["evaluationError"] = problem
    review["status"] = status
    shape(review)  # the Go struct's field order, as kube writes the answer
    return await scope.respond_object(review, 201)


async def _received(scope: Scope) -> Obj:
    """The review as kube's create handler hands it on: decoded, its writer's
    managedFields entry recorded."""
    _opts, _out, review = await decode_write(scope, "CreateOptions")
    review.setdefault("spec", {})
    scope.tracker()(None, review)
    return review


async def self_subject(scope: Scope) -> bytes:
    review = await _received(scope)
    _refuse(
        validate_spec(review["spec"], subject=False) + validate_metadata(review["metadata"], False)
    )
    return await _answer(scope, review, _attributes(scope.ctx.user, review["spec"]))


def _subject(spec: Obj) -> UserInfo:
    extra = {k: tuple(v) for k, v in (spec.get("extra") or {}).items()}
    groups = tuple(spec.get("groups") or ())
    return UserInfo(spec.get("user") or "", spec.get("uid") or "", groups, extra)


def subject_attributes(spec: Obj) -> Attributes:
    """What a SubjectAccessReview's ``spec`` asks the authorizer (the in-process
    controllers ask through this too); a StatusError when the spec is invalid."""
    _refuse(validate_spec(spec, subject=True))
    return _attributes(_subject(spec), spec)


async def subject(scope: Scope) -> bytes:
    review = await _received(scope)
    spec = review["spec"]
    _refuse(validate_spec(spec, subject=True) + validate_metadata(review["metadata"], False))
    return await _answer(scope, review, _attributes(_subject(spec), spec))


async def local_subject(scope: Scope) -> bytes:
    review = await _received(scope)
    meta, spec = review["metadata"], review["spec"]
    check_namespace(scope.resource, meta, scope.namespace)  # kube's create handler
    meta["namespace"] = scope.namespace
    errs = validate_spec(spec, subject=True) + validate_metadata(meta, True)
    _refuse(errs + validate_local(spec, scope.namespace))
    return await _answer(scope, review, _attributes(_subject(spec), spec))


async def self_subject_rules(scope: Scope) -> bytes:
    """What the caller may do in ``spec.namespace``: every authorizer's rules, united."""
    _opts, _out, review = await decode_write(scope, "CreateOptions")
    namespace = (review.get("spec") or {}).get("namespace") or ""
    if not namespace:
        raise errors.bad_request("no namespace on request")
    authorizer = scope.handlers.authorizer
    resolve = getattr(authorizer, "rules_for", None)
    rules = resolve(scope.ctx.user, namespace) if resolve is not None else RuleSet()
    status: Obj = {
        "resourceRules": rules.resource,
        "nonResourceRules": rules.non_resource,
        "incomplete": rules.incomplete,
    }
    if rules.errors:
        errs = rules.errors
        status["evaluationError"] = errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]"
    answer = {"kind": review["kind"], "apiVersion": review["apiVersion"], "metadata": {}}
    return await scope.respond_object({**answer, "spec": {}, "status": status}, 201)


HANDLERS = {
    (GROUP, "selfsubjectrulesreviews"): self_subject_rules,
    (GROUP, "selfsubjectaccessreviews"): self_subject,
    (GROUP, "subjectaccessreviews"): subject,
    (GROUP, "localsubjectaccessreviews"): local_subject,
}
