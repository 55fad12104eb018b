"""kube's authz library (with the 1.31 field/label selector additions).

``authorizer.group('apps').resource('deployments').namespace('ns').check('get').allowed()``.
The server's authorizers are asynchronous, a CEL function call is not: the caller binds a
synchronous ``AuthorizeFn`` (typically answering from decisions it gathered beforehand, or a
cache) for the duration of an evaluation with ``bound(fn, user)``, which yields the
``kubernetes.authorization.Authorizer`` value to pass as the ``authorizer`` variable.
``AuthorizeFn(attributes) -> (decision, reason)`` with decision ``"allow"``, ``"deny"`` or
``"no-opinion"``; an exception becomes the decision's ``error()``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from platform_api.cel.library.common import EvalError
from platform_api.cel.library.decl import Function, member
from platform_api.cel.protos import library_class
from platform_api.validation import names


@dataclass(frozen=True)
class CheckAttributes:
    """kube's ``authorizer.AttributesRecord`` as the library fills it; user as a UserInfo dict."""

    user: dict[str, Any]
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""
    label_selector: str = ""


AuthorizeFn = Callable[[CheckAttributes], tuple[str, str]]

_PKG = "kubernetes.authorization."
Authorizer = library_class(_PKG + "Authorizer")
PathCheck = library_class(_PKG + "PathCheck")
GroupCheck = library_class(_PKG + "GroupCheck")
ResourceCheck = library_class(_PKG + "ResourceCheck")
Decision = library_class(_PKG + "Decision")

_BOUND: dict[int, AuthorizeFn] = {}
_HANDLES = itertools.count(1)


@contextlib.contextmanager
def bound(fn: AuthorizeFn, user: dict[str, Any]) -> Iterator[Any]:
    """Make ``fn`` reachable from CEL while the block runs; yields the authorizer value."""
    handle = next(_HANDLES)
    _BOUND[handle] = fn
    try:
        yield Authorizer(handle=handle, user=json.dumps(user, sort_keys=True))
    finally:
        del _BOUND[handle]


def _authorize(handle: int, attrs: CheckAttributes) -> Any:
    fn = _BOUND.get(handle)
    if fn is None:
        return Decision(decision="no-opinion", error="authorizer is no longer available")
    try:
        decision, reason = fn(attrs)
    except Exception as e:
        return Decision(decision="no-opinion", error=str(e))
    return Decision(decision=decision, reason=reason)


def _path(authz: Any, path: str) -> Any:
    if not path.strip():
        raise EvalError("path must not be empty")
    return PathCheck(handle=authz.handle, user=authz.user, path=path)


def _group(authz: Any, group: str) -> Any:
    return GroupCheck(handle=authz.handle, user=authz.user, group=group)


def _service_account(authz: Any, namespace: str, name: str) -> Any:
    if names.validate_name("subdomain", name):
        raise EvalError("Invalid service account name")
    if names.validate_name("label", namespace):
        raise EvalError("Invalid service account namespace")
    user = {
        "username": f"system:serviceaccount:{namespace}:{name}",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
    }
    return Authorizer(handle=authz.handle, user=json.dumps(user, sort_keys=True))


def _resource(group: Any, resource: str) -> Any:
    if not resource.strip():
        raise EvalError("resource must not be empty")
    return ResourceCheck(handle=group.handle, user=group.user, group=group.group, resource=resource)


def _with(field: str) -> Callable[[Any, str], Any]:
    def setter(check: Any, value: str) -> Any:
        copy = ResourceCheck()
        copy.CopyFrom(check)
        setattr(copy, field, value)
        return copy

    return setter


def _path_check(check: Any, verb: str) -> Any:
    attrs = CheckAttributes(json.loads(check.user), verb, False, path=check.path)
    return _authorize(check.handle, attrs)


def _resource_check(check: Any, verb: str) -> Any:
    attrs = CheckAttributes(
        json.loads(check.user),
        verb,
        True,
        api_group=check.group,
        api_version="*",
        resource=check.resource,
        subresource=check.subresource,
        namespace=check.namespace,
        name=check.name,
        field_selector=check.field_selector,
        label_selector=check.label_selector,
    )
    return _authorize(check.handle, attrs)


_A, _P, _G, _R, _D = (
    _PKG + n for n in ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision")
)
FUNCTIONS = [
    Function("path", [member("authorizer_path", (_A, "string"), _P, _path)]),
    Function("group", [member("authorizer_group", (_A, "string"), _G, _group)]),
    Function(
        "serviceAccount",
        [
            member("authorizer_serviceaccount", (_A, "string", "string"), _A, _service_account),
        ],
    ),
    Function("resource", [member("groupcheck_resource", (_G, "string"), _R, _resource)]),
    Function(
        "subresource",
        [
            member("resourcecheck_subresource", (_R, "string"), _R, _with("subresource")),
        ],
    ),
    Function(
        "namespace",
        [
            member("resourcecheck_namespace", (_R, "string"), _R, _with("namespace")),
        ],
    ),
    Function("name", [member("resourcecheck_name", (_R, "string"), _R, _with("name"))]),
    Function(
        "check",
        [
            member("pathcheck_check", (_P, "string"), _D, _path_check),
            member("resourcecheck_check", (_R, "string"), _D, _resource_check),
        ],
    ),
    Function("errored", [member("decision_errored", (_D,), "bool", lambda d: bool(d.error))]),
    Function("error", [member("decision_error", (_D,), "string", lambda d: d.error)]),
    Function(
        "allowed",
        [
            member("decision_allowed", (_D,), "bool", lambda d: d.decision == "allow"),
        ],
    ),
    Function("reason", [member("decision_reason", (_D,), "string", lambda d: d.reason)]),
]

SELECTOR_FUNCTIONS = [
    Function(
        "fieldSelector",
        [
            member("authorizer_fieldselector", (_R, "string"), _R, _with("field_selector")),
        ],
    ),
    Function(
        "labelSelector",
        [
            member("authorizer_labelselector", (_R, "string"), _R, _with("label_selector")),
        ],
    ),
]
