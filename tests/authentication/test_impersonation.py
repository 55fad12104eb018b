"""Impersonation: each part is authorized, and the new identity's implied groups."""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.web.http_headers import Headers

from platform_api.authentication.impersonation import impersonate, requested
from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.union import (
    AlwaysAllow,
    AlwaysDeny,
    AuthorizerUnion,
    PrivilegedGroups,
)
from platform_api.errors import StatusError

CAROL = UserInfo("carol", groups=("system:authenticated",))
ADMIN = UserInfo("root", groups=("system:masters",))


class Recording:
    """Allows everything and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    async def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        self.asked.append(attrs)
        return Decision.ALLOW, ""


def headers(**values: str | list[str]) -> Headers:
    h = Headers()
    for name, value in values.items():
        h.setRawHeaders(name.replace("_", "-"), value if isinstance(value, list) else [value])
    return h


@pytest_twisted.ensureDeferred
async def test_no_headers_keep_the_caller() -> None:
    assert await impersonate(Headers(), CAROL, AlwaysDeny()) is CAROL


@pytest_twisted.ensureDeferred
async def test_every_part_is_authorized() -> None:
    authz = Recording()
    h = headers(
        Impersonate_User="bob",
        Impersonate_Group=["g1", "g2"],
        Impersonate_Uid="u-1",
        **{"Impersonate-Extra-Scopes%2Fa": "s"},
    )
    user = await impersonate(h, CAROL, authz)
    assert user == UserInfo(
        "bob", "u-1", ("g1", "g2", "system:authenticated"), {"scopes/a": ("s",)}
    )
    assert [(a.resource, a.subresource, a.api_group, a.name) for a in authz.asked] == [
        ("users", "", "", "bob"),
        ("groups", "", "", "g1"),
        ("groups", "", "", "g2"),
        ("userextras", "scopes/a", "authentication.platform.io", "s"),
        ("uids", "", "authentication.platform.io", "u-1"),
    ]
    assert not h.hasHeader("Impersonate-User")


@pytest_twisted.ensureDeferred
async def test_forbidden_without_permission() -> None:
    union = AuthorizerUnion([PrivilegedGroups(), AlwaysDeny()])
    with pytest.raises(StatusError) as caught:
        await impersonate(headers(Impersonate_User="bob"), CAROL, union)
    status = caught.value.status()
    assert (status["code"], status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        'users "bob" is forbidden: User "carol" cannot impersonate resource "users" in API '
        'group "" at the cluster scope: Everything is forbidden.'
    )
    sa = headers(Impersonate_User="system:serviceaccount:ns:robot")
    with pytest.raises(StatusError) as caught:
        await impersonate(sa, CAROL, union)
    assert caught.value.status()["message"].endswith(
        'cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns": '
        "Everything is forbidden."
    )
    assert (await impersonate(headers(Impersonate_User="bob"), ADMIN, union)).name == "bob"


@pytest_twisted.ensureDeferred
async def test_anonymous_gets_unauthenticated() -> None:
    user = await impersonate(headers(Impersonate_User="system:anonymous"), CAROL, AlwaysAllow())
    assert user.groups == ("system:unauthenticated",)
    keeps = headers(Impersonate_User="x", Impersonate_Group="system:unauthenticated")
    assert (await impersonate(keeps, CAROL, AlwaysAllow())).groups == ("system:unauthenticated",)


def test_parts_without_a_user_are_a_bad_request() -> None:
    """kube v1.36 prints what was asked for as Go's %#v of a user.DefaultInfo (recorded)."""
    with pytest.raises(StatusError) as caught:
        requested(headers(Impersonate_Uid="u", **{"Impersonate-Extra-K": "v"}))
    assert caught.value.status()["message"] == (
        'requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string(nil), '
        'Extra:map[string][]string{"k":[]string{"v"}}} without impersonating a user name'
    )
    with pytest.raises(StatusError) as caught:
        requested(headers(Impersonate_Group="g1"))
    assert caught.value.status()["message"] == (
        'requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g1"}, '
        "Extra:map[string][]string(nil)} without impersonating a user name"
    )
