"""PolicyRule matching and covering, case by case against kube's semantics."""

from __future__ import annotations

import pytest

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes
from platform_api.authorization.rbac import rules

USER = UserInfo("carol")


def res(verb: str, resource: str, **kw: str) -> Attributes:
    return Attributes(user=USER, verb=verb, resource_request=True, resource=resource, **kw)


def url(verb: str, path: str) -> Attributes:
    return Attributes(user=USER, verb=verb, resource_request=False, path=path)


READ_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


@pytest.mark.parametrize(
    ("rule", "attrs", "allowed"),
    [
        (READ_PODS, res("get", "pods", namespace="x"), True),
        (READ_PODS, res("delete", "pods"), False),
        (READ_PODS, res("get", "pods", api_group="apps"), False),
        (READ_PODS, res("get", "pods", subresource="log"), False),
        ({**READ_PODS, "resources": ["pods/log"]}, res("get", "pods", subresource="log"), True),
        ({**READ_PODS, "resources": ["*/log"]}, res("get", "pods", subresource="log"), True),
        ({**READ_PODS, "resources": ["*/log"]}, res("get", "pods"), False),
        ({**READ_PODS, "resources": ["*"]}, res("get", "pods", subresource="exec"), True),
        ({**READ_PODS, "apiGroups": ["*"]}, res("get", "pods", api_group="apps"), True),
        ({**READ_PODS, "verbs": ["*"]}, res("deletecollection", "pods"), True),
        # resourceNames: a name must be requested and be listed.
        ({**READ_PODS, "resourceNames": ["a"]}, res("get", "pods", name="a"), True),
        ({**READ_PODS, "resourceNames": ["a"]}, res("get", "pods", name="b"), False),
        ({**READ_PODS, "resourceNames": ["a"]}, res("list", "pods"), False),
        ({**READ_PODS, "resourceNames": ["a"]}, res("list", "pods", name="a"), True),
        (
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"], "resourceNames": ["a"]},
            res("create", "pods"),
            False,
        ),
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, url("get", "/healthz"), True),
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, url("get", "/healthz/ping"), False),
        ({"nonResourceURLs": ["/healthz*"], "verbs": ["get"]}, url("get", "/healthz/ping"), True),
        ({"nonResourceURLs": ["*"], "verbs": ["get"]}, url("get", "/anything"), True),
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, url("post", "/healthz"), False),
        # A resource rule never grants a non-resource path, and vice versa.
        ({**READ_PODS, "resources": ["*"]}, url("get", "/api"), False),
        ({"nonResourceURLs": ["*"], "verbs": ["*"]}, res("get", "pods"), False),
    ],
)
def test_allows(rule: dict, attrs: Attributes, allowed: bool) -> None:
    assert rules.allows(attrs, rule) is allowed


def test_covers_breaks_rules_down() -> None:
    owner = [READ_PODS, {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["*"]}]
    assert rules.covers(owner, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]) == (
        True,
        [],
    )
    assert rules.covers(
        owner, [{"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["patch"]}]
    )[0]
    held, missing = rules.covers(
        owner, [{"apiGroups": ["", "apps"], "resources": ["pods"], "verbs": ["get", "delete"]}]
    )
    assert not held
    assert missing == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]},
        {"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["delete"]},
    ]


def test_covers_resource_names_and_urls() -> None:
    named = [{**READ_PODS, "resourceNames": ["a"]}]
    assert rules.covers(named, [{**READ_PODS, "resourceNames": ["a"]}])[0]
    assert not rules.covers(named, [{**READ_PODS, "resourceNames": ["b"]}])[0]
    assert not rules.covers(named, [READ_PODS])[0]  # unnamed is wider than named
    assert rules.covers([READ_PODS], [{**READ_PODS, "resourceNames": ["b"]}])[0]
    owner = [{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}]
    assert rules.covers(owner, [{"nonResourceURLs": ["/logs/a"], "verbs": ["get"]}])[0]
    assert not rules.covers(owner, [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])[0]
    assert rules.covers([{"nonResourceURLs": ["*"], "verbs": ["*"]}], owner)[0]


def test_compact_string_as_go_prints_it() -> None:
    missing = rules.breakdown(
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
    )
    assert [rules.compact_string(r) for r in rules.compact(missing)] == [
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'
    ]
    assert (
        rules.compact_string({"nonResourceURLs": ["/x"], "verbs": ["get"]})
        == '{NonResourceURLs:["/x"], Verbs:["get"]}'
    )
    assert (
        rules.compact_string({**READ_PODS, "resourceNames": ["a"]})
        == '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "list"]}'
    )
