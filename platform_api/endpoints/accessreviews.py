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
from platform_api.endpoints.body import decode_write
from platform_api.endpoints.scope import Scope
from platform_api.validation import field

Obj = dict[str, Any]
GROUP = "authorization.platform.io"
_EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"


def _attributes(user: UserInfo, spec: Obj, kind: str, name: str) -> Attributes:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):
        errs = [field.invalid("spec.resourceAttributes", resource or {}, _EXACTLY_ONE)]
        raise errors.invalid(kind, GROUP, name, errs)
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
    assert non_resource is not None
    return Attributes(
        user=user,
        verb=non_resource.get("verb", ""),
        resource_request=False,
        path=non_resource.get("path", ""),
    )


async def _answer(scope: Scope, review: Obj, attrs: Attributes, code: int = 201) -> bytes:
    authorizer = scope.handlers.authorizer
    decision, reason = (
        await authorizer.authorize(attrs) if authorizer else (Decision.NO_OPINION, "")
    )
    status: Obj = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    meta = review.setdefault("metadata", {})
    meta.setdefault("creationTimestamp", None)
    review["status"] = status
    return scope.respond_object(review, code)


async def self_subject(scope: Scope) -> bytes:
    _opts, _out, review = decode_write(scope, "CreateOptions")
    spec = review.setdefault("spec", {})
    name = review["metadata"].get("name", "")
    attrs = _attributes(scope.ctx.user, spec, "SelfSubjectAccessReview", name)
    return await _answer(scope, review, attrs)


def _subject(spec: Obj, kind: str, name: str) -> UserInfo:
    user, groups = spec.get("user") or "", tuple(spec.get("groups") or ())
    if not user and not groups:
        errs = [field.invalid("spec.user", user, "at least one of user or group must be specified")]
        raise errors.invalid(kind, GROUP, name, errs)
    extra = {k: tuple(v) for k, v in (spec.get("extra") or {}).items()}
    return UserInfo(user, spec.get("uid") or "", groups, extra)


def subject_attributes(spec: Obj, name: str = "") -> Attributes:
    """What a SubjectAccessReview's ``spec`` asks the authorizer (the in-process
    controllers ask through this too); a StatusError when the spec is invalid."""
    kind = "SubjectAccessReview"
    return _attributes(_subject(spec, kind, name), spec, kind, name)


async def subject(scope: Scope) -> bytes:
    _opts, _out, review = decode_write(scope, "CreateOptions")
    spec = review.setdefault("spec", {})
    attrs = subject_attributes(spec, review["metadata"].get("name", ""))
    return await _answer(scope, review, attrs)


async def local_subject(scope: Scope) -> bytes:
    _opts, _out, review = decode_write(scope, "CreateOptions")
    spec = review.setdefault("spec", {})
    kind, name = "LocalSubjectAccessReview", review["metadata"].get("name", "")
    if spec.get("nonResourceAttributes") is not None:
        errs = [
            field.invalid(
                "spec.nonResourceAttributes",
                spec["nonResourceAttributes"],
                "disallowed on this kind of request",
            )
        ]
        raise errors.invalid(kind, GROUP, name, errs)
    resource = spec.setdefault("resourceAttributes", {})
    namespace = resource.get("namespace") or scope.namespace
    if namespace != scope.namespace:
        raise errors.bad_request(
            f"spec.resourceAttributes.namespace must match namespace: {scope.namespace}"
        )
    resource["namespace"] = namespace
    review["metadata"]["namespace"] = scope.namespace
    attrs = _attributes(_subject(spec, kind, name), spec, kind, name)
    return await _answer(scope, review, attrs)


async def self_subject_rules(scope: Scope) -> bytes:
    """What the caller may do in ``spec.namespace``: every authorizer's rules, united."""
    _opts, _out, review = decode_write(scope, "CreateOptions")
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
    meta = {"creationTimestamp": None}
    answer = {"kind": review["kind"], "apiVersion": review["apiVersion"], "metadata": meta}
    return scope.respond_object({**answer, "spec": {}, "status": status}, 201)


HANDLERS = {
    (GROUP, "selfsubjectrulesreviews"): self_subject_rules,
    (GROUP, "selfsubjectaccessreviews"): self_subject,
    (GROUP, "subjectaccessreviews"): subject,
    (GROUP, "localsubjectaccessreviews"): local_subject,
}
