"""Admission policies and bindings need their writer to read the parameter objects: the
texts, verbs and attributes recorded from kube-apiserver v1.36 (a user impersonated by the
admin, with create rights on the policy kinds only)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api import errors
from platform_api.authentication.user import AUTHENTICATED, MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.registry.admissionregistration import GROUP
from platform_api.registry.policyparams import ParamAccessGuard, go_user
from platform_api.scheme.types import ResourceType
from tests.synchronous import run

BOB = UserInfo("bob", groups=(AUTHENTICATED,))
CONFIGMAPS = {"apiVersion": "v1", "kind": "ConfigMap"}
POLICIES = {
    "p1": {"spec": {"paramKind": CONFIGMAPS}},
    "p2": {"spec": {"paramKind": {"apiVersion": "v1", "kind": "Widget"}}},
}


class Authorizer:
    """Allows what ``allowed`` holds ((verb, group, resource, namespace, name)); records."""

    def __init__(self, *allowed: tuple[str, str, str, str, str]) -> None:
        self.allowed, self.asked = set(allowed), []

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        key = (attrs.verb, attrs.api_group, attrs.resource, attrs.namespace, attrs.name)
        self.asked.append((*key, attrs.api_version))
        return (Decision.ALLOW if key in self.allowed else Decision.NO_OPINION), ""


def _resolve(api_version: str, kind: str) -> tuple[str, str] | None:
    return ("", "configmaps") if (api_version, kind) == ("v1", "ConfigMap") else None


def _guard(plural: str, authorizer: Any) -> ParamAccessGuard:
    kind = {
        "validatingadmissionpolicies": "ValidatingAdmissionPolicy",
        "validatingadmissionpolicybindings": "ValidatingAdmissionPolicyBinding",
        "mutatingadmissionpolicies": "MutatingAdmissionPolicy",
        "mutatingadmissionpolicybindings": "MutatingAdmissionPolicyBinding",
    }[plural]
    rt = ResourceType(GROUP, "v1", kind, plural, kind.lower(), namespaced=False)
    return ParamAccessGuard(rt, authorizer, _resolve, POLICIES.get)


def _refusal(guard: ParamAccessGuard, obj: dict, user: UserInfo = BOB, old: Any = None) -> Any:
    with pytest.raises(errors.StatusError) as caught:
        run(guard.check(user, "", {"metadata": {"name": "x"}, **obj}, old))
    return caught.value


def _binding(policy: str = "p1", **ref: Any) -> dict:
    return {"spec": {"policyName": policy, "paramRef": {"parameterNotFoundAction": "Deny", **ref}}}


def test_a_user_prints_as_go_prints_kubes_user_info() -> None:
    assert go_user(BOB) == "&{bob  [system:authenticated] map[]}"
    who = UserInfo("bob", "u-1", ("grp1", AUTHENTICATED), {"k2": ("v1",), "a1": ("x", "y")})
    assert go_user(who) == "&{bob u-1 [grp1 system:authenticated] map[a1:[x y] k2:[v1]]}"


def test_a_policy_needs_get_on_every_object_of_its_param_kind() -> None:
    authorizer = Authorizer()
    refused = _refusal(
        _guard("validatingadmissionpolicies", authorizer), {"spec": {"paramKind": CONFIGMAPS}}
    )
    assert refused.code == 422 and refused.reason == "Invalid"
    assert refused.message == (
        f'ValidatingAdmissionPolicy.{GROUP} "x" is invalid: spec.paramKind: Forbidden: user '
        '&{bob  [system:authenticated] map[]} must have "get" permission on all objects of the '
        "referenced paramKind (kind=ConfigMap, apiVersion=v1)"
    )
    assert refused.details["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": refused.message.split("invalid: spec.paramKind: ", 1)[1],
            "field": "spec.paramKind",
        }
    ]
    assert authorizer.asked == [("get", "", "configmaps", "*", "*", "v1")]
    allowed = Authorizer(("get", "", "configmaps", "*", "*"))
    run(
        _guard("mutatingadmissionpolicies", allowed).check(
            BOB, "", {"spec": {"paramKind": CONFIGMAPS}}, None
        )
    )
    # An unknown kind needs every resource of its group and version.
    unknown = Authorizer()
    _refusal(_guard("mutatingadmissionpolicies", unknown), POLICIES["p2"])
    assert unknown.asked == [("get", "", "*", "*", "*", "v1")]


def test_no_check_for_masters_no_param_kind_or_an_unchanged_one() -> None:
    authorizer = Authorizer()
    guard = _guard("validatingadmissionpolicies", authorizer)
    root = UserInfo("admin", groups=(MASTERS, AUTHENTICATED))
    run(guard.check(root, "", {"spec": {"paramKind": CONFIGMAPS}}, None))
    run(guard.check(BOB, "", {"spec": {}}, None))
    old = {"spec": {"paramKind": dict(CONFIGMAPS)}}
    run(
        guard.check(
            BOB, "", {"metadata": {"labels": {"x": "y"}}, "spec": {"paramKind": CONFIGMAPS}}, old
        )
    )
    assert authorizer.asked == []
    _refusal(guard, {"spec": {"paramKind": CONFIGMAPS}}, old={"spec": {}})


def test_a_binding_needs_to_read_what_its_param_ref_names() -> None:
    authorizer = Authorizer()
    guard = _guard("validatingadmissionpolicybindings", authorizer)
    got = _refusal(guard, _binding(name="cfg", namespace="ns1"))
    assert got.message.endswith(
        'spec.paramRef: Forbidden: user &{bob  [system:authenticated] map[]} does not have "get" '
        "permission on the object referenced by paramRef"
    )
    listed = _refusal(guard, _binding(selector={}))
    assert 'does not have "list" permission on the object referenced by paramRef' in listed.message
    assert authorizer.asked == [
        ("get", "", "configmaps", "ns1", "cfg", "v1"),
        ("list", "", "configmaps", "", "", "v1"),
    ]
    run(
        _guard(
            "validatingadmissionpolicybindings", Authorizer(("get", "", "configmaps", "ns1", "cfg"))
        ).check(BOB, "", _binding(name="cfg", namespace="ns1"), None)
    )


def test_a_binding_whose_policy_or_kind_cannot_be_found_needs_everything() -> None:
    authorizer = Authorizer()
    guard = _guard("validatingadmissionpolicybindings", authorizer)
    missing = _refusal(guard, _binding("nope", name="cfg"))
    assert missing.message.endswith(
        "spec.paramRef: Forbidden: unable to get policy nope to determine minimum required "
        'permissions and user &{bob  [system:authenticated] map[]} does not have "get" permission '
        "for all groups, versions and resources"
    )
    unknown = _refusal(guard, _binding("p2", name="cfg"))
    assert "Forbidden: unable to resolve paramKind &{v1 Widget} to determine" in unknown.message
    assert authorizer.asked == [
        ("get", "*", "*", "", "cfg", "*"),
        ("get", "", "*", "", "cfg", "v1"),
    ]


def test_a_mutating_binding_words_its_refusal_as_kube_does() -> None:
    got = _refusal(
        _guard("mutatingadmissionpolicybindings", Authorizer()),
        _binding(name="cfg", namespace="ns1"),
    )
    assert got.message == (
        f'MutatingAdmissionPolicyBinding.{GROUP} "x" is invalid: spec.paramRef: Forbidden: user '
        'get does not have "&{bob  [system:authenticated] map[]}" permission on the object '
        "referenced by paramRef"
    )


def test_a_binding_with_a_param_ref_is_checked_on_every_update() -> None:
    authorizer = Authorizer()
    guard = _guard("validatingadmissionpolicybindings", authorizer)
    stored = _binding(name="cfg", namespace="ns1")
    _refusal(guard, {**stored, "metadata": {"name": "x", "labels": {"x": "y"}}}, old=stored)
    plain = {"spec": {"policyName": "p1", "paramRef": {"name": "cfg"}}}
    run(guard.check(BOB, "", plain, {"spec": {"policyName": "p1", "paramRef": {"name": "cfg"}}}))
    assert len(authorizer.asked) == 1
